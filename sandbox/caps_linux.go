package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// lockedSecurebits make root an ordinary user for good: no capabilities from uid 0
// (SECBIT_NOROOT), none kept or lost on uid changes (SECBIT_NO_SETUID_FIXUP), none kept
// across setuid (SECBIT_KEEP_CAPS off) and no ambient raising, each with its lock bit.
const lockedSecurebits = secbitNoRoot | secbitNoRootLocked |
	secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
	secbitKeepCapsLocked |
	secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked

// The securebits of <linux/securebits.h>, which x/sys/unix lacks.
const (
	secbitNoRoot                  = 1 << 0
	secbitNoRootLocked            = 1 << 1
	secbitNoSetuidFixup           = 1 << 2
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7
)

// capSetPCAP is CAP_SETPCAP, which dropping the bounding set and setting securebits need.
const capSetPCAP = 8

// DropCapabilities gives up every capability on every thread of the process, for good:
// it clears the ambient set, locks the securebits, drops every capability from the
// bounding set and sets the effective, permitted and inheritable sets to empty.
//
// Without CAP_SETPCAP (an unprivileged runner outside a user namespace) the securebits
// and the bounding set cannot be changed; then those two steps are skipped, which is safe
// only because such a process has nothing in its permitted set to lose and
// no_new_privs (see SetNoNewPrivs) keeps execve from granting file capabilities.
// With a non-empty permitted set but no CAP_SETPCAP it fails.
func DropCapabilities() error {
	return dropCapabilities(llsys.AllThreadsPrctl, func(hdr *unix.CapUserHeader, data *unix.CapUserData) error {
		if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(hdr)), uintptr(unsafe.Pointer(data)), 0); e != 0 {
			return e
		}
		return nil
	})
}

// DropCapabilitiesThread is DropCapabilities for the calling thread alone, which must
// be locked to its goroutine for good: what it starts inherits the empty sets. It costs
// a few dozen plain system calls instead of as many stops of every thread.
func DropCapabilitiesThread() error {
	return dropCapabilities(func(option int, a2, a3, a4, a5 uintptr) error {
		return unix.Prctl(option, a2, a3, a4, a5)
	}, unix.Capset)
}

// dropCapabilities does DropCapabilities' steps with the given prctl and capset.
func dropCapabilities(prctl func(option int, a2, a3, a4, a5 uintptr) error, capset func(*unix.CapUserHeader, *unix.CapUserData) error) error {
	if err := prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("drop capabilities: clearing the ambient set: %w", err)
	}
	setpcap, err := haveEffective(capSetPCAP)
	if err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	if setpcap {
		if err := prctl(unix.PR_SET_SECUREBITS, lockedSecurebits, 0, 0, 0); err != nil {
			return fmt.Errorf("drop capabilities: securebits: %w", err)
		}
		last, err := lastCap()
		if err != nil {
			return fmt.Errorf("drop capabilities: %w", err)
		}
		for c := 0; c <= last; c++ {
			if err := prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("drop capabilities: bounding set cap %d: %w", c, err)
			}
		}
	} else if prm := statusField("/proc/thread-self/status", "CapPrm"); strings.Trim(prm, "0") != "" {
		return fmt.Errorf("drop capabilities: permitted set %s but no CAP_SETPCAP to drop the bounding set", prm)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: capset: %w", err)
	}
	return nil
}

// haveEffective reports whether the calling thread's effective set holds capability c.
func haveEffective(c uint) (bool, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false, fmt.Errorf("capget: %w", err)
	}
	return data[c/32].Effective&(1<<(c%32)) != 0, nil
}

// lastCap is the highest capability number this kernel knows.
func lastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("cap_last_cap: %w", err)
	}
	return n, nil
}

// SetNoNewPrivs sets no_new_privs on every thread: execve can then grant no privileges
// (setuid bits and file capabilities are ignored). It is irreversible.
func SetNoNewPrivs() error {
	if err := llsys.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return nil
}

// SetNotDumpable marks the process not dumpable: no core dumps, and other processes of
// the same user cannot ptrace it or read its /proc files (memory, environment).
func SetNotDumpable() error {
	if err := llsys.AllThreadsPrctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("not dumpable: %w", err)
	}
	return nil
}

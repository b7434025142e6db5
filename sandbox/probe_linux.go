package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Probe finds out, for real and without changing the calling process, which kernel
// mechanisms this machine grants: it starts a child in new user, mount, pid and net
// namespaces, asks Landlock for its ABI, and reads the seccomp and no_new_privs state.
func Probe() Report {
	abi, landlock := probeLandlock()
	return Report{
		UserNS:      probeUserNS(),
		Landlock:    landlock,
		Seccomp:     probeSeccomp(),
		NoNewPrivs:  probeNoNewPrivs(),
		CgroupV2:    probeCgroupV2(),
		Ptrace:      ptraceFeature(readPtraceScope()),
		LandlockABI: abi,
	}
}

// probeUserNS starts `true` in new user, pid and net namespaces with ns-root mapped to
// the caller, then unshares a mount namespace and makes / private inside it (Go's
// forkExec does that for Unshareflags CLONE_NEWNS), which needs CAP_SYS_ADMIN in the new
// user namespace: an AppArmor-restricted namespace fails there rather than silently
// handing out a namespace without capabilities.
func probeUserNS() Feature {
	bin, err := exec.LookPath("true")
	if err != nil {
		return Feature{Reason: "no `true` binary in PATH to start in a namespace"}
	}
	attr := &syscall.ProcAttr{Sys: &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET,
		Unshareflags:               syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
	}}
	pid, err := syscall.ForkExec(bin, []string{"true"}, attr)
	if err != nil {
		return Feature{Reason: userNSReason(err)}
	}
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return Feature{Reason: fmt.Sprintf("waiting for the namespaced child: %v", err)}
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return Feature{Reason: fmt.Sprintf("`true` in new namespaces ended with status %v", ws)}
	}
	return Feature{OK: true, Reason: "user, mount, pid and net namespaces"}
}

// userNSReason explains a failure to start a child in new namespaces.
func userNSReason(err error) string {
	if sysctlIs("/proc/sys/user/max_user_namespaces", "0") {
		return fmt.Sprintf("user.max_user_namespaces is 0 (%v)", err)
	}
	if sysctlIs("/proc/sys/kernel/unprivileged_userns_clone", "0") {
		return fmt.Sprintf("kernel.unprivileged_userns_clone is 0 (%v)", err)
	}
	if sysctlIs("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1") {
		return fmt.Sprintf("kernel.apparmor_restrict_unprivileged_userns is 1, so AppArmor "+
			"denies capabilities in new user namespaces (%v)", err)
	}
	switch {
	case errors.Is(err, syscall.EPERM):
		return fmt.Sprintf("the container's seccomp profile or a missing CAP_SYS_ADMIN refuses "+
			"unshare(CLONE_NEWUSER) (%v)", err)
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Sprintf("the user namespace limit is reached (%v)", err)
	case errors.Is(err, syscall.EINVAL):
		return fmt.Sprintf("the kernel lacks user namespaces (%v)", err)
	}
	return fmt.Sprintf("starting a child in new namespaces: %v", err)
}

// sysctlIs reports whether the file at path holds want.
func sysctlIs(path, want string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.TrimSpace(string(b)) == want
}

func probeLandlock() (int, Feature) {
	abi, err := llsys.LandlockGetABIVersion()
	switch {
	case err == nil && abi >= 1:
		return abi, Feature{OK: true, Reason: fmt.Sprintf("ABI %d", abi)}
	case errors.Is(err, syscall.ENOSYS):
		return 0, Feature{Reason: "the kernel has no Landlock (older than 5.13 or built without CONFIG_SECURITY_LANDLOCK)"}
	case errors.Is(err, syscall.EOPNOTSUPP):
		return 0, Feature{Reason: "Landlock is disabled at boot (the lsm= list lacks landlock)"}
	case err != nil:
		return 0, Feature{Reason: fmt.Sprintf("landlock_create_ruleset: %v", err)}
	}
	return 0, Feature{Reason: fmt.Sprintf("unexpected Landlock ABI %d", abi)}
}

func probeSeccomp() Feature {
	mode, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	if err != nil {
		return Feature{Reason: fmt.Sprintf("prctl(PR_GET_SECCOMP): %v (kernel built without CONFIG_SECCOMP)", err)}
	}
	// The filter mode itself: SECCOMP_GET_ACTION_AVAIL succeeds only with CONFIG_SECCOMP_FILTER.
	action := uint32(unix.SECCOMP_RET_ERRNO)
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); e != 0 {
		return Feature{Reason: fmt.Sprintf("seccomp filter mode unavailable: %v", e)}
	}
	status := procStatus("Seccomp")
	switch {
	case mode == 2 || status == "2":
		n := procStatus("Seccomp_filters")
		return Feature{OK: true, Reason: fmt.Sprintf("already in filter mode with %s filter(s), e.g. a container's profile; ours stacks on top", n)}
	case mode == 1:
		return Feature{Reason: "the process is in seccomp strict mode"}
	}
	return Feature{OK: true, Reason: "filter mode"}
}

func probeNoNewPrivs() Feature {
	v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil {
		return Feature{Reason: fmt.Sprintf("prctl(PR_GET_NO_NEW_PRIVS): %v (kernel older than 3.5)", err)}
	}
	if v == 1 {
		return Feature{OK: true, Reason: "already set"}
	}
	return Feature{OK: true}
}

// readPtraceScope reads Yama's kernel.yama.ptrace_scope: -1 without Yama.
func readPtraceScope() int {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// ptraceFeature says whether this process may take its descendants' descriptors
// (pidfd_getfd, process_vm_readv: ptrace access), under Yama's scope (-1: no Yama).
func ptraceFeature(scope int) Feature {
	switch {
	case scope < 0:
		return Feature{OK: true, Reason: "no Yama"}
	case scope <= 1:
		return Feature{OK: true, Reason: fmt.Sprintf("kernel.yama.ptrace_scope is %d", scope)}
	case scope == 2:
		if ok, _ := haveEffective(unix.CAP_SYS_PTRACE); ok {
			return Feature{OK: true, Reason: "kernel.yama.ptrace_scope is 2, with CAP_SYS_PTRACE"}
		}
		return Feature{Reason: "kernel.yama.ptrace_scope is 2 and agentrun lacks CAP_SYS_PTRACE"}
	}
	return Feature{Reason: fmt.Sprintf("kernel.yama.ptrace_scope is %d: no process may attach", scope)}
}

func probeCgroupV2() Feature {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return Feature{OK: true, Reason: "unified hierarchy at /sys/fs/cgroup"}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return Feature{Reason: fmt.Sprintf("reading mounts: %v", err)}
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// mountinfo: id parent major:minor root mountpoint options [optional...] - fstype source super
		fields := strings.Fields(sc.Text())
		for i, fld := range fields {
			if fld == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return Feature{OK: true, Reason: "hybrid: cgroup2 mounted at " + fields[4]}
			}
		}
	}
	return Feature{Reason: "no cgroup2 mount (cgroup v1 only)"}
}

// procStatus returns the value of field in /proc/self/status, "" if absent.
func procStatus(field string) string {
	return statusField("/proc/self/status", field)
}

// statusField returns the value of field in a /proc status file, "" if absent.
func statusField(path, field string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return fieldOf(string(b), field)
}

// fieldOf returns the value of field in the text of a /proc status file, "" if absent.
func fieldOf(status, field string) string {
	for line := range strings.Lines(status) {
		k, v, ok := strings.Cut(line, ":")
		if ok && k == field {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

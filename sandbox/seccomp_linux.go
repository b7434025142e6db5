package sandbox

import (
	"fmt"
	"runtime"
	"slices"
	"syscall"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/cpu"
	"golang.org/x/sys/unix"
)

// newNamespaceFlags are the clone flags that make a namespace.
const newNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID |
	unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// denial is one system call the filter refuses, and why.
type denial struct {
	name  string
	errno syscall.Errno
	// flags, when not 0, refuses the call only when its first argument has one of
	// these bits set (clone's flags are arg0 on amd64 and arm64 alike).
	flags uint64
	// x86 marks calls that exist only on amd64.
	x86 bool
	why string
}

// denyList is every system call ApplySeccomp refuses; everything else is allowed. Each
// fails with EPERM, as if a capability were missing, except clone3, whose flags sit in
// memory a filter cannot read: it fails with ENOSYS, so glibc (2.34+) falls back to
// clone, whose flags the filter can read. (Go's os/exec uses clone unless
// SysProcAttr.UseCgroupFD or CLONE_NEWTIME is asked for; those fail after the filter.)
var denyList = []denial{
	{name: "ptrace", why: "reads and writes other processes' memory and registers"},
	{name: "process_vm_readv", why: "reads another process's memory"},
	{name: "process_vm_writev", why: "writes another process's memory"},
	{name: "mount", why: "changes the mount table"},
	{name: "umount2", why: "removes mounts, e.g. the ones hiding the host"},
	{name: "pivot_root", why: "changes the root"},
	{name: "chroot", why: "changes the root"},
	{name: "mount_setattr", why: "new mount API: changes mount flags"},
	{name: "move_mount", why: "new mount API: attaches mounts"},
	{name: "open_tree", why: "new mount API: clones mount trees"},
	{name: "fsopen", why: "new mount API: makes a file system"},
	{name: "fsconfig", why: "new mount API: configures a file system"},
	{name: "fsmount", why: "new mount API: mounts a file system"},
	{name: "fspick", why: "new mount API: reconfigures a mount"},
	{name: "unshare", why: "makes namespaces, the usual first step of a kernel exploit"},
	{name: "setns", why: "enters other namespaces"},
	{name: "clone", flags: newNamespaceFlags, why: "clone with any CLONE_NEW* flag makes namespaces"},
	{name: "clone3", errno: unix.ENOSYS, why: "its flags are out of the filter's reach; ENOSYS makes libc fall back to clone"},
	{name: "bpf", why: "loads eBPF programs and maps, a large attack surface"},
	{name: "perf_event_open", why: "profiling interface, a large attack surface and a side channel"},
	{name: "userfaultfd", why: "stalls kernel page faults, a staple of exploits"},
	{name: "keyctl", why: "the kernel keyring is not namespaced"},
	{name: "add_key", why: "the kernel keyring is not namespaced"},
	{name: "request_key", why: "the kernel keyring is not namespaced"},
	{name: "kexec_load", why: "replaces the running kernel"},
	{name: "kexec_file_load", why: "replaces the running kernel"},
	{name: "init_module", why: "loads kernel modules"},
	{name: "finit_module", why: "loads kernel modules"},
	{name: "delete_module", why: "unloads kernel modules"},
	{name: "open_by_handle_at", why: "opens files by handle, escaping a changed root"},
	{name: "name_to_handle_at", why: "makes file handles for open_by_handle_at"},
	{name: "swapon", why: "changes the machine's swap"},
	{name: "swapoff", why: "changes the machine's swap"},
	{name: "reboot", why: "reboots the machine"},
	{name: "acct", why: "switches process accounting"},
	{name: "quotactl", why: "changes disk quotas"},
	{name: "lookup_dcookie", why: "reads paths of other processes' files"},
	{name: "fanotify_init", why: "watches the whole file system"},
	{name: "iopl", x86: true, why: "raises I/O privilege level"},
	{name: "ioperm", x86: true, why: "opens I/O ports"},
}

// deniedIoctls are the ioctl requests the second filter refuses with EPERM: both push
// input into a terminal that is not the caller's own, so a tool could type commands
// into the shell that started agentrun.
var deniedIoctls = []uint32{unix.TIOCSTI, unix.TIOCLINUX}

// policy builds the go-seccomp-bpf policy from denyList for the running architecture,
// refusing socket(2) for the address families in denySockets as well.
func policy(info *arch.Info, denySockets []int) (seccomp.Policy, error) {
	groups := map[syscall.Errno]*seccomp.SyscallGroup{}
	var order []syscall.Errno
	for _, d := range denyList {
		if _, ok := info.SyscallNames[d.name]; !ok {
			if d.x86 && info.ID != arch.X86_64.ID {
				continue
			}
			return seccomp.Policy{}, fmt.Errorf("no system call %s on %s", d.name, info.Name)
		}
		errno := d.errno
		if errno == 0 {
			errno = unix.EPERM
		}
		g := groups[errno]
		if g == nil {
			g = &seccomp.SyscallGroup{Action: seccomp.ActionErrno | seccomp.Action(errno)}
			groups[errno] = g
			order = append(order, errno)
		}
		if d.flags == 0 {
			g.Names = append(g.Names, d.name)
			continue
		}
		g.NamesWithCondtions = append(g.NamesWithCondtions, seccomp.NameWithConditions{
			Name:       d.name,
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: d.flags}},
		})
	}
	if len(denySockets) > 0 {
		g := groups[unix.EPERM]
		if g == nil {
			g = &seccomp.SyscallGroup{Action: seccomp.ActionErrno | seccomp.Action(unix.EPERM)}
			groups[unix.EPERM] = g
			order = append(order, unix.EPERM)
		}
		for _, family := range denySockets {
			g.NamesWithCondtions = append(g.NamesWithCondtions, seccomp.NameWithConditions{
				Name:       "socket",
				Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: uint64(family)}},
			})
		}
	}
	p := seccomp.Policy{DefaultAction: seccomp.ActionAllow}
	for _, e := range order {
		p.Syscalls = append(p.Syscalls, *groups[e])
	}
	return p, nil
}

// ApplySeccomp sets no_new_privs and installs the seccomp filters on every thread of
// the process (SECCOMP_FILTER_FLAG_TSYNC); threads made later inherit them, and so do
// all children. It is irreversible. There are two filters, stacked (the kernel takes
// the strictest answer):
//
//   - denyList, assembled by go-seccomp-bpf;
//   - a small hand-written one that refuses the ioctls in deniedIoctls comparing only
//     the low 32 bits of the request (the kernel truncates it to an int, so a 64-bit
//     compare is bypassed by setting high bits), and answers ENOSYS to every system
//     call made under a foreign ABI (i386 on amd64, arm32 on arm64), whose numbers the
//     first filter would otherwise let through unchecked.
//
// denySockets are address families (unix.AF_UNIX, unix.AF_INET, ...) whose sockets
// socket(2) refuses with EPERM; socketpair(2) stays allowed.
func ApplySeccomp(denySockets ...int) error { return applySeccomp(true, denySockets) }

// ApplySeccompThread installs the same filters on the calling thread alone, which must
// be locked to its goroutine for good and have no_new_privs set: what it starts
// inherits them.
func ApplySeccompThread(denySockets ...int) error { return applySeccomp(false, denySockets) }

func applySeccomp(tsync bool, denySockets []int) error {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		return fmt.Errorf("seccomp: unsupported architecture %s", runtime.GOARCH)
	}
	info, err := arch.GetInfo("")
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	p, err := policy(info, denySockets)
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	var flags seccomp.FilterFlag
	var rawFlags uintptr
	if tsync {
		if err := SetNoNewPrivs(); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
		// LoadFilter's own no_new_privs is per thread; keep it and seccomp on one thread.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		flags = seccomp.FilterFlagTSync | seccomp.FilterFlag(unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH)
		rawFlags = unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH
	}
	if err := seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Flag: flags, Policy: p}); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	if err := loadFilter(ioctlAndABIFilter(uint32(info.ID), deniedIoctls), rawFlags); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// ioctlAndABIFilter builds the second filter; see ApplySeccomp.
func ioctlAndABIFilter(nativeArch uint32, ioctls []uint32) []unix.SockFilter {
	const (
		nrOff   = 0
		archOff = 4
		argsOff = 16
	)
	arg1Lo := uint32(argsOff + 8)
	if cpu.IsBigEndian {
		arg1Lo += 4
	}
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	ret := func(k uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k}
	}
	n := uint8(len(ioctls))
	prog := []unix.SockFilter{
		ld(archOff),
		jeq(nativeArch, 1, 0),
		ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)),
		ld(nrOff),
		jeq(uint32(unix.SYS_IOCTL), 0, n+1), // not ioctl: allow
		ld(arg1Lo),
	}
	for i, req := range ioctls {
		prog = append(prog, jeq(req, n-uint8(i), 0)) // match: jump over the rest and allow
	}
	return append(prog, ret(unix.SECCOMP_RET_ALLOW), ret(unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM)))
}

// loadFilter installs a raw filter: on every thread with the TSYNC flags, else on the
// calling thread.
func loadFilter(insts []unix.SockFilter, flags uintptr) error {
	prog := unix.SockFprog{Len: uint16(len(insts)), Filter: &insts[0]}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(insts)
	switch {
	case e != 0:
		return e
	case r != 0:
		return fmt.Errorf("thread %d could not be synchronised", r)
	}
	return nil
}

// DeniedSyscalls lists the system calls ApplySeccomp refuses on this architecture, for
// logs and `agentrun sandbox check`.
func DeniedSyscalls() []string {
	var names []string
	for _, d := range denyList {
		if !d.x86 || runtime.GOARCH == "amd64" {
			names = append(names, d.name)
		}
	}
	return slices.Clip(names)
}

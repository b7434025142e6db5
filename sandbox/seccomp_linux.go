//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// newNamespaceFlags are the clone flags that make a namespace.
const newNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID |
	unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// denial is one system call the filter refuses, and why.
type denial struct {
	name  string
	nr    uint32
	errno syscall.Errno // EPERM when 0 (refusal)
	// flags, when not 0, refuses the call only when its first argument has one of
	// these bits set (clone's flags are arg0 on amd64 and arm64 alike; every CLONE_NEW*
	// bit is in its low 32).
	flags uint32
	why   string
}

// denyList is every system call ApplySeccomp refuses; everything else is allowed. Each
// fails with EPERM, as if a capability were missing, except clone3, whose flags sit in
// memory a filter cannot read: it fails with ENOSYS, so glibc (2.34+) falls back to
// clone, whose flags the filter can read. (Go's os/exec uses clone unless
// SysProcAttr.UseCgroupFD or CLONE_NEWTIME is asked for; those fail after the filter.)
// archDenials adds the calls of one architecture (amd64's I/O port calls).
var denyList = append([]denial{
	{name: "ptrace", nr: unix.SYS_PTRACE, why: "reads and writes other processes' memory and registers"},
	{name: "process_vm_readv", nr: unix.SYS_PROCESS_VM_READV, why: "reads another process's memory"},
	{name: "process_vm_writev", nr: unix.SYS_PROCESS_VM_WRITEV, why: "writes another process's memory"},
	{name: "mount", nr: unix.SYS_MOUNT, why: "changes the mount table"},
	{name: "umount2", nr: unix.SYS_UMOUNT2, why: "removes mounts, e.g. the ones hiding the host"},
	{name: "pivot_root", nr: unix.SYS_PIVOT_ROOT, why: "changes the root"},
	{name: "chroot", nr: unix.SYS_CHROOT, why: "changes the root"},
	{name: "mount_setattr", nr: unix.SYS_MOUNT_SETATTR, why: "new mount API: changes mount flags"},
	{name: "move_mount", nr: unix.SYS_MOVE_MOUNT, why: "new mount API: attaches mounts"},
	{name: "open_tree", nr: unix.SYS_OPEN_TREE, why: "new mount API: clones mount trees"},
	{name: "fsopen", nr: unix.SYS_FSOPEN, why: "new mount API: makes a file system"},
	{name: "fsconfig", nr: unix.SYS_FSCONFIG, why: "new mount API: configures a file system"},
	{name: "fsmount", nr: unix.SYS_FSMOUNT, why: "new mount API: mounts a file system"},
	{name: "fspick", nr: unix.SYS_FSPICK, why: "new mount API: reconfigures a mount"},
	{name: "unshare", nr: unix.SYS_UNSHARE, why: "makes namespaces, the usual first step of a kernel exploit"},
	{name: "setns", nr: unix.SYS_SETNS, why: "enters other namespaces"},
	{name: "clone", nr: unix.SYS_CLONE, flags: newNamespaceFlags, why: "clone with any CLONE_NEW* flag makes namespaces"},
	{name: "clone3", nr: unix.SYS_CLONE3, errno: unix.ENOSYS, why: "its flags are out of the filter's reach; ENOSYS makes libc fall back to clone"},
	{name: "bpf", nr: unix.SYS_BPF, why: "loads eBPF programs and maps, a large attack surface"},
	{name: "perf_event_open", nr: unix.SYS_PERF_EVENT_OPEN, why: "profiling interface, a large attack surface and a side channel"},
	{name: "userfaultfd", nr: unix.SYS_USERFAULTFD, why: "stalls kernel page faults, a staple of exploits"},
	{name: "keyctl", nr: unix.SYS_KEYCTL, why: "the kernel keyring is not namespaced"},
	{name: "add_key", nr: unix.SYS_ADD_KEY, why: "the kernel keyring is not namespaced"},
	{name: "request_key", nr: unix.SYS_REQUEST_KEY, why: "the kernel keyring is not namespaced"},
	{name: "kexec_load", nr: unix.SYS_KEXEC_LOAD, why: "replaces the running kernel"},
	{name: "kexec_file_load", nr: unix.SYS_KEXEC_FILE_LOAD, why: "replaces the running kernel"},
	{name: "init_module", nr: unix.SYS_INIT_MODULE, why: "loads kernel modules"},
	{name: "finit_module", nr: unix.SYS_FINIT_MODULE, why: "loads kernel modules"},
	{name: "delete_module", nr: unix.SYS_DELETE_MODULE, why: "unloads kernel modules"},
	{name: "open_by_handle_at", nr: unix.SYS_OPEN_BY_HANDLE_AT, why: "opens files by handle, escaping a changed root"},
	{name: "name_to_handle_at", nr: unix.SYS_NAME_TO_HANDLE_AT, why: "makes file handles for open_by_handle_at"},
	{name: "swapon", nr: unix.SYS_SWAPON, why: "changes the machine's swap"},
	{name: "swapoff", nr: unix.SYS_SWAPOFF, why: "changes the machine's swap"},
	{name: "reboot", nr: unix.SYS_REBOOT, why: "reboots the machine"},
	{name: "acct", nr: unix.SYS_ACCT, why: "switches process accounting"},
	{name: "quotactl", nr: unix.SYS_QUOTACTL, why: "changes disk quotas"},
	{name: "lookup_dcookie", nr: unix.SYS_LOOKUP_DCOOKIE, why: "reads paths of other processes' files"},
	{name: "fanotify_init", nr: unix.SYS_FANOTIFY_INIT, why: "watches the whole file system"},
	{name: "io_uring_setup", nr: unix.SYS_IO_URING_SETUP, why: "its operations (socket, connect, open) run past every seccomp rule, and it is a large attack surface"},
	{name: "io_uring_enter", nr: unix.SYS_IO_URING_ENTER, why: "submits io_uring operations"},
	{name: "io_uring_register", nr: unix.SYS_IO_URING_REGISTER, why: "configures io_uring rings"},
}, archDenials...)

// refusal is the errno the filter answers d's call with.
func (d denial) refusal() syscall.Errno {
	if d.errno == 0 {
		return unix.EPERM
	}
	return d.errno
}

// deniedIoctls are the ioctl requests the filter refuses with EPERM: both push input
// into a terminal that is not the caller's own, so a tool could type commands into the
// shell that started agentrun.
var deniedIoctls = []uint32{unix.TIOCSTI, unix.TIOCLINUX}

// ApplySeccomp sets no_new_privs and installs the seccomp filter on every thread of the
// process (SECCOMP_FILTER_FLAG_TSYNC); threads made later inherit it, and so do all
// children. It is irreversible. The filter (filterProgram) refuses the calls of
// denyList, the ioctls of deniedIoctls, socket(2) for every socket sockets does not
// allow and the signals to the processes signals protects, and answers ENOSYS to every
// call made under a foreign
// ABI (i386 or x32 on amd64, arm32 on arm64), whose numbers would otherwise name other
// calls. Families are allowed, not denied, because a family a list forgets is a way out:
// vsock, which no network namespace confines, reaches a VM's host.
// With sockets.Connect it returns the filter's listener, else nil.
func ApplySeccomp(sockets Sockets, signals Signals) (*os.File, error) {
	return applySeccomp(true, sockets, signals)
}

// ApplySeccompThread installs the same filter on the calling thread alone, which must
// be locked to its goroutine for good and have no_new_privs set: what it starts
// inherits it.
func ApplySeccompThread(sockets Sockets, signals Signals) (*os.File, error) {
	return applySeccomp(false, sockets, signals)
}

func applySeccomp(tsync bool, sockets Sockets, signals Signals) (*os.File, error) {
	var flags uintptr
	if tsync {
		if err := SetNoNewPrivs(); err != nil {
			return nil, fmt.Errorf("seccomp: %w", err)
		}
		// ESRCH rather than a thread id when a thread cannot be synchronised.
		flags = unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH
	}
	if sockets.Connect {
		flags |= unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	}
	fd, err := loadFilter(filterProgram(sockets, signals), flags)
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	if !sockets.Connect {
		return nil, nil
	}
	return os.NewFile(uintptr(fd), "seccomp listener"), nil
}

// The offsets of struct seccomp_data's fields, which the filter reads 32 bits at a
// time: the system call's number, its ABI, and the low half of each argument (the
// kernel reads every argument the filter checks as an int, so the high half must not
// change the answer: a 64-bit compare would let a caller hide AF_UNIX or TIOCSTI
// behind a high bit).
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// argLow is the offset of the low 32 bits of argument i: the first half, as the
// filter's architectures (amd64 and arm64) are little-endian. (Asking x/sys/cpu cost
// every worker stage's start a package init of CPU-feature probes, each a trap to
// the hypervisor in a VM.)
func argLow(i uint32) uint32 { return offArgs + 8*i }

func ld(off uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
}

func jump(op uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k, Jt: jt, Jf: jf}
}

func ret(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }

func retErrno(e syscall.Errno) unix.SockFilter {
	return ret(unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA)
}

// onCall is a block of the filter for the system call nr: when the number loaded is
// nr, body runs (it loads what it checks and ends in a return); otherwise the filter
// goes on after it.
func onCall(nr uint32, body ...unix.SockFilter) []unix.SockFilter {
	return append([]unix.SockFilter{jump(unix.BPF_JEQ, nr, 0, uint8(len(body)))}, body...)
}

// onValues is a body that returns match when the low 32 bits of argument arg are one
// of values, and otherwise when they are none.
func onValues(arg uint32, values []uint32, match, otherwise unix.SockFilter) []unix.SockFilter {
	body := []unix.SockFilter{ld(argLow(arg))}
	n := uint8(len(values))
	for i, v := range values {
		body = append(body, jump(unix.BPF_JEQ, v, n-uint8(i), 0)) // a match jumps to the last
	}
	return append(body, otherwise, match)
}

// socketRule is the body of socket(2)'s block: allow for a family of sockets.Any; for
// one of sockets.TCP, allow when the type (its flags masked off) is SOCK_STREAM and the
// protocol 0 or IPPROTO_TCP; for AF_NETLINK with sockets.Netlink set, allow when the
// protocol is one of it; eperm for everything else.
func socketRule(sockets Sockets, allow, eperm unix.SockFilter) []unix.SockFilter {
	n := len(sockets.Any) + len(sockets.TCP)
	if sockets.Netlink != nil {
		n++
	}
	// body: the family's load, n jumps, eperm, the TCP check and the netlink check
	// (when there are such families), allow.
	tcpAt := n + 2
	nlAt := tcpAt
	if len(sockets.TCP) > 0 {
		nlAt += 7
	}
	allowAt := nlAt
	if sockets.Netlink != nil {
		allowAt += len(sockets.Netlink) + 2
	}
	to := func(target, from int) uint8 { return uint8(target - (from + 1)) } // from: the jump's index
	body := []unix.SockFilter{ld(argLow(0))}
	for _, f := range sockets.Any {
		body = append(body, jump(unix.BPF_JEQ, uint32(f), to(allowAt, len(body)), 0))
	}
	for _, f := range sockets.TCP {
		body = append(body, jump(unix.BPF_JEQ, uint32(f), to(tcpAt, len(body)), 0))
	}
	if sockets.Netlink != nil {
		body = append(body, jump(unix.BPF_JEQ, unix.AF_NETLINK, to(nlAt, len(body)), 0))
	}
	body = append(body, eperm)
	if len(sockets.TCP) > 0 {
		body = append(body,
			ld(argLow(1)),
			unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: sockTypeMask},
			jump(unix.BPF_JEQ, unix.SOCK_STREAM, 0, 3)) // else the eperm below
		body = append(body, ld(argLow(2)))
		body = append(body, jump(unix.BPF_JEQ, 0, to(allowAt, len(body)), 0))
		body = append(body, jump(unix.BPF_JEQ, unix.IPPROTO_TCP, to(allowAt, len(body)), 0))
		body = append(body, eperm)
	}
	if sockets.Netlink != nil {
		// The protocol's check ends in the allow every other jump lands on.
		return append(body, onValues(2, args32(sockets.Netlink, 1), allow, eperm)...)
	}
	return append(body, allow)
}

// sockTypeMask keeps a socket's type of socket(2)'s second argument, without
// SOCK_NONBLOCK and SOCK_CLOEXEC.
const sockTypeMask = 0xf

// signalRules are the blocks of the filter that keep signals from the processes of s
// (see Signals); none when s guards nothing.
func signalRules(s Signals, allow, eperm unix.SockFilter) []unix.SockFilter {
	if !s.guards() {
		return nil
	}
	pids, groups := args32(s.Pids, 1), args32(s.Groups, 1)
	owners := append(slices.Clone(pids), args32(s.Groups, -1)...) // a pid, or a group as its negative
	var prog []unix.SockFilter
	prog = append(prog, onCall(unix.SYS_KILL, onValues(0, append(slices.Clone(owners), allProcesses), eperm, allow)...)...)
	for _, nr := range []uint32{unix.SYS_TGKILL, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_RT_TGSIGQUEUEINFO, unix.SYS_PIDFD_OPEN} {
		prog = append(prog, onCall(nr, onValues(0, pids, eperm, allow)...)...)
	}
	prog = append(prog, onCall(unix.SYS_TKILL, eperm)...)
	// A pidfd may be a /proc/PID folder opened by path, whose process the filter cannot
	// see: ENOSYS, as before Linux 5.1, on which programs that use pidfds (Go's os
	// package among them) fall back to kill(2).
	prog = append(prog, onCall(unix.SYS_PIDFD_SEND_SIGNAL, retErrno(unix.ENOSYS))...)
	// Nor may a tool join one of the groups, where kill(0), its own group, would reach.
	prog = append(prog, onCall(unix.SYS_SETPGID, onValues(1, groups, eperm, allow)...)...)
	setOwn := onValues(2, owners, eperm, allow)
	prog = append(prog, onCall(unix.SYS_FCNTL, append([]unix.SockFilter{
		ld(argLow(1)),
		jump(unix.BPF_JEQ, unix.F_SETOWN_EX, uint8(len(setOwn)+2), 0), // the eperm after
		jump(unix.BPF_JEQ, unix.F_SETOWN, 1, 0),
		allow,
	}, append(setOwn, eperm)...)...)...)
	return prog
}

// args32 are values, each times sign, as the filter reads an argument: its low 32 bits.
func args32(values []int, sign int) []uint32 {
	out := make([]uint32, len(values))
	for i, v := range values {
		out[i] = uint32(sign * v)
	}
	return out
}

// allProcesses is kill(2)'s pid -1, every process the caller may signal, as the
// filter reads it (the low 32 bits).
const allProcesses = 0xffffffff

// ownerIoctls set the process or group a socket or terminal sends SIGIO and SIGURG
// to, through a pointer the filter cannot follow: refused where signals are guarded.
// (FIOSETOWN and SIOCSPGRP of the kernel's uapi sockios.h, the same on every
// architecture.)
var ownerIoctls = []uint32{0x8901, 0x8902}

// filterProgram is the classic BPF program of ApplySeccomp.
func filterProgram(sockets Sockets, signals Signals) []unix.SockFilter {
	prog := []unix.SockFilter{
		ld(offArch),
		jump(unix.BPF_JEQ, auditArch, 1, 0),
		retErrno(unix.ENOSYS),
		ld(offNr),
	}
	if foreignNrBit != 0 { // x32 shares amd64's arch value and marks its numbers instead
		prog = append(prog, jump(unix.BPF_JGE, foreignNrBit, 0, 1), retErrno(unix.ENOSYS))
	}
	allow, eperm := ret(unix.SECCOMP_RET_ALLOW), retErrno(unix.EPERM)
	ioctls := deniedIoctls
	if signals.guards() {
		ioctls = append(slices.Clone(deniedIoctls), ownerIoctls...)
	}
	prog = append(prog, onCall(unix.SYS_IOCTL, onValues(1, ioctls, eperm, allow)...)...)
	prog = append(prog, onCall(unix.SYS_SOCKET, socketRule(sockets, allow, eperm)...)...)
	prog = append(prog, signalRules(signals, allow, eperm)...)
	if sockets.NoListen {
		prog = append(prog, onCall(unix.SYS_LISTEN, eperm)...)
	}
	if sockets.Connect {
		prog = append(prog, onCall(unix.SYS_CONNECT, ret(unix.SECCOMP_RET_USER_NOTIF))...)
		for _, c := range []struct{ nr, flagsArg uint32 }{{unix.SYS_SENDTO, 3}, {unix.SYS_SENDMSG, 2}, {unix.SYS_SENDMMSG, 3}} {
			prog = append(prog, onCall(c.nr,
				ld(argLow(c.flagsArg)),
				jump(unix.BPF_JSET, unix.MSG_FASTOPEN, 1, 0),
				allow,
				eperm)...)
		}
	}
	for _, d := range denyList {
		errno := d.refusal()
		if d.flags == 0 {
			prog = append(prog, onCall(d.nr, retErrno(errno))...)
			continue
		}
		prog = append(prog, onCall(d.nr,
			ld(argLow(0)),
			jump(unix.BPF_JSET, d.flags, 1, 0),
			ret(unix.SECCOMP_RET_ALLOW),
			retErrno(errno))...)
	}
	return append(prog, ret(unix.SECCOMP_RET_ALLOW))
}

// loadFilter installs a filter: on every thread with the TSYNC flags, else on the
// calling thread. With SECCOMP_FILTER_FLAG_NEW_LISTENER it returns the listener's
// descriptor (close-on-exec).
func loadFilter(insts []unix.SockFilter, flags uintptr) (int, error) {
	prog := unix.SockFprog{Len: uint16(len(insts)), Filter: &insts[0]}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(insts)
	switch {
	case e != 0:
		return -1, e
	case flags&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER != 0:
		return int(r), nil
	case r != 0:
		return -1, fmt.Errorf("thread %d could not be synchronised", r)
	}
	return -1, nil
}

// DeniedSyscalls lists the system calls ApplySeccomp refuses on this architecture, for
// logs and `agentrun sandbox check`; a call refused only with some flags says which.
func DeniedSyscalls() []string {
	names := make([]string, 0, len(denyList))
	for _, d := range denyList {
		name := d.name
		if d.flags == newNamespaceFlags {
			name += " (CLONE_NEW* flags)"
		}
		names = append(names, name)
	}
	return names
}

//go:build linux && (amd64 || arm64)

package sandbox

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompNotifAddfd is the kernel's struct seccomp_notif_addfd.
type seccompNotifAddfd struct {
	ID         uint64
	Flags      uint32
	Srcfd      uint32
	Newfd      uint32
	NewfdFlags uint32
}

// installSocket answers notification n, a connect(2) on the caller's sockfd to sa (an
// IPv4 or IPv6 address), without taking the caller's socket: it connects a TCP socket
// of its own to sa and installs it as the caller's sockfd, with the caller's O_NONBLOCK
// and close-on-exec (from /proc/<tid>/fdinfo). It returns the errno the caller gets.
func installSocket(raw syscall.RawConn, n seccompNotif, sockfd int, sa unix.Sockaddr) syscall.Errno {
	domain := unix.AF_INET
	switch sa.(type) {
	case *unix.SockaddrInet4:
	case *unix.SockaddrInet6:
		domain = unix.AF_INET6
	default:
		return unix.EACCES // a netlink socket's, whose protocol is not known here
	}
	nonblock, cloexec := fdFlags(int(n.Pid), sockfd)
	s, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return asErrno(err)
	}
	defer func() { _ = unix.Close(s) }()
	if err := unix.Connect(s, sa); err != nil {
		return asErrno(err)
	}
	if nonblock {
		if err := unix.SetNonblock(s, true); err != nil {
			return asErrno(err)
		}
	}
	add := seccompNotifAddfd{ID: n.ID, Flags: unix.SECCOMP_ADDFD_FLAG_SETFD, Srcfd: uint32(s), Newfd: uint32(sockfd)}
	if cloexec {
		add.NewfdFlags = unix.O_CLOEXEC
	}
	if notifIoctl(raw, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&add)) != 0 {
		return unix.EACCES
	}
	return 0
}

// fdFlags reads whether descriptor fd of thread tid is non-blocking and close-on-exec,
// from /proc/<tid>/fdinfo/<fd>; both false when it cannot be read.
func fdFlags(tid, fd int) (nonblock, cloexec bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return false, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			f, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			if err != nil {
				return false, false
			}
			return f&unix.O_NONBLOCK != 0, f&unix.O_CLOEXEC != 0
		}
	}
	return false, false
}

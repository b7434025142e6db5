//go:build linux && (amd64 || arm64)

package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's struct seccomp_data, seccomp_notif and seccomp_notif_resp.
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// maxSockaddr is the size of struct sockaddr_storage: connect(2) refuses longer
// addresses with EINVAL.
const maxSockaddr = 128

// ServeConnects answers, until ctx is done or every process under the filter has
// ended, each connect(2) that the seccomp filter of Sockets.Connect hands to its
// listener, the descriptor fd (ApplySeccompThread's, passed over a unix socket), which
// it owns. A connection to allow (the proxy) it makes itself, on the caller's own
// socket (taken with pidfd_getfd) and with its own copy of the address, so that no
// thread of the caller can change the address between the check and the connect; the
// caller gets connect's result. So is a netlink socket's connection to the kernel; one
// to another process's socket or to a multicast group gets EPERM, as a caller without
// CAP_NET_ADMIN does from the kernel. Any other address is refused with EACCES, as
// Landlock refuses a port. Each refusal is reported to refused (host:port, the netlink
// port and groups, or the address family); refused is called from the goroutines
// ServeConnects starts. It closes fd and waits for every goroutine it started before it
// returns.
//
// Where agentrun may not take the caller's socket (pidfd_getfd, which a container's
// default seccomp profile refuses without CAP_SYS_PTRACE), it connects a socket of its
// own and installs it in the caller's place (SECCOMP_IOCTL_NOTIF_ADDFD), with the
// caller's O_NONBLOCK and close-on-exec; the options the caller set on its socket are
// lost then.
func ServeConnects(ctx context.Context, fd int, allow netip.AddrPort, refused func(target string)) error {
	return serveConnects(ctx, fd, allow, refused, takeSocket)
}

// takeFunc duplicates a caller's socket into this process: takeSocket, or in tests one
// that is refused as a container refuses it.
type takeFunc func(raw syscall.RawConn, n seccompNotif, sockfd int) (int, syscall.Errno)

func serveConnects(ctx context.Context, fd int, allow netip.AddrPort, refused func(target string), take takeFunc) error {
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return fmt.Errorf("connects: %w", err)
	}
	// The caller's thread is woken on the CPU that answers it, where the answer was
	// written (Linux 6.6; older kernels refuse the flag, and wake it as they will).
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	l := os.NewFile(uintptr(fd), "seccomp listener") // non-blocking: in the runtime's poller
	defer func() { _ = l.Close() }()
	raw, err := l.SyscallConn()
	if err != nil {
		return fmt.Errorf("connects: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = l.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		n, err := receive(raw)
		if errors.Is(err, errHangUp) || ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("connects: %w", err)
		}
		wg.Go(func() {
			errno := connectFor(raw, n, allow, refused, take)
			resp := seccompNotifResp{ID: n.ID, Error: -int32(errno)}
			// ENOENT: the caller was interrupted and is no longer waiting.
			_ = notifIoctl(raw, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		})
	}
}

// notifIoctl makes the ioctl req of the listener raw with the struct at arg, and
// returns its errno (EBADF once the listener is closed).
func notifIoctl(raw syscall.RawConn, req uintptr, arg unsafe.Pointer) syscall.Errno {
	e := unix.EBADF
	_ = raw.Control(func(fd uintptr) { _, _, e = unix.Syscall(unix.SYS_IOCTL, fd, req, uintptr(arg)) })
	return e
}

// errHangUp says that every process under the filter has ended.
var errHangUp = errors.New("every process under the filter has ended")

// receive waits for the next notification. SECCOMP_IOCTL_NOTIF_RECV blocks whatever
// O_NONBLOCK says, so it is called only once poll(2) says one is waiting.
func receive(raw syscall.RawConn) (seccompNotif, error) {
	var n seccompNotif
	var rerr error
	err := raw.Read(func(fd uintptr) bool {
		for {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if k, err := unix.Poll(pfd, 0); err != nil || k == 0 {
				return false // the poller wakes us at the next one
			}
			if pfd[0].Revents&unix.POLLIN == 0 && pfd[0].Revents&unix.POLLHUP != 0 {
				rerr = errHangUp
				return true
			}
			n = seccompNotif{}
			_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n)))
			if e == unix.ENOENT || e == unix.EINTR {
				continue // the caller went away before we took it; another may wait
			}
			if e != 0 {
				rerr = e
			}
			return true
		}
	})
	if err != nil {
		return n, err
	}
	return n, rerr
}

// connectFor does the connect(2) of notification n if its address is allow, and
// returns the errno the caller gets (0 for success).
func connectFor(raw syscall.RawConn, n seccompNotif, allow netip.AddrPort, refused func(string), take takeFunc) syscall.Errno {
	if n.Data.Nr != unix.SYS_CONNECT {
		return unix.ENOSYS
	}
	sockfd, ptr, size := int(int32(n.Data.Args[0])), n.Data.Args[1], int(uint32(n.Data.Args[2]))
	if size < 2 || size > maxSockaddr {
		return unix.EINVAL
	}
	buf, err := readMemory(int(n.Pid), ptr, size)
	if err != nil {
		return unix.EFAULT
	}
	family, target, ok := parseSockaddr(buf)
	var sa unix.Sockaddr
	switch {
	case family == unix.AF_NETLINK && size >= unix.SizeofSockaddrNetlink:
		// The kernel's end of a netlink socket, which the filter lets tools have: the C
		// library asks it for the interfaces. Nothing leaves the machine. Another
		// process's socket or a multicast group the kernel lets only a caller with
		// CAP_NET_ADMIN connect to, and it would judge this process, not the tool: the
		// tool gets the EPERM it would get itself.
		pid, groups := binary.NativeEndian.Uint32(buf[4:8]), binary.NativeEndian.Uint32(buf[8:12])
		if pid != 0 || groups != 0 {
			refused(fmt.Sprintf("netlink port %d, groups %#x", pid, groups))
			return unix.EPERM
		}
		sa = &unix.SockaddrNetlink{Family: unix.AF_NETLINK}
	case ok && target == allow && family == unix.AF_INET6:
		sa = &unix.SockaddrInet6{Port: int(allow.Port()), Addr: netip.AddrFrom16(allow.Addr().As16()).As16()}
	case ok && target == allow:
		sa = &unix.SockaddrInet4{Port: int(allow.Port()), Addr: allow.Addr().As4()}
	}
	if sa == nil {
		if ok {
			refused(target.String())
		} else {
			refused("address family " + strconv.Itoa(int(family)))
		}
		return unix.EACCES
	}
	fd, errno := take(raw, n, sockfd)
	if errno == unix.EPERM {
		return installSocket(raw, n, sockfd, sa)
	}
	if errno != 0 {
		return errno
	}
	defer func() { _ = unix.Close(fd) }()
	return asErrno(unix.Connect(fd, sa)) // EINPROGRESS for a non-blocking socket, ECONNREFUSED, EISCONN, ...
}

// asErrno is the errno of a system call's error, 0 for none.
func asErrno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if e, ok := errors.AsType[syscall.Errno](err); ok {
		return e
	}
	return unix.EINVAL
}

// readMemory reads size bytes at ptr of thread tid's memory: with process_vm_readv,
// or through /proc/<tid>/mem where a seccomp profile refuses that call.
func readMemory(tid int, ptr uint64, size int) ([]byte, error) {
	buf := make([]byte, size)
	_, err := unix.ProcessVMReadv(tid, []unix.Iovec{{Base: &buf[0], Len: uint64(size)}},
		[]unix.RemoteIovec{{Base: uintptr(ptr), Len: size}}, 0)
	if err == nil {
		return buf, nil
	}
	f, err := os.Open("/proc/" + strconv.Itoa(tid) + "/mem")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.ReadAt(buf, int64(ptr)); err != nil {
		return nil, err
	}
	return buf, nil
}

// takeSocket duplicates the caller's descriptor sockfd into this process, once the
// notification shows the caller is still the one waiting.
func takeSocket(raw syscall.RawConn, n seccompNotif, sockfd int) (int, syscall.Errno) {
	pidfd, err := openCaller(int(n.Pid))
	if err != nil {
		return -1, unix.ESRCH
	}
	defer func() { _ = unix.Close(pidfd) }()
	// The pid could have been reused between the notification and pidfd_open: the
	// notification is still valid only while its caller waits, so pidfd names it.
	if notifIoctl(raw, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&n.ID)) != 0 {
		return -1, unix.ESRCH
	}
	fd, err := unix.PidfdGetfd(pidfd, sockfd, 0)
	switch {
	case errors.Is(err, unix.EBADF):
		return -1, unix.EBADF
	case err != nil: // no ptrace access to the caller, or a seccomp profile refuses the call
		return -1, unix.EPERM
	}
	return fd, 0
}

// pidfdThread is PIDFD_THREAD (O_EXCL, Linux 6.9): a pidfd of a thread that does not
// lead its thread group.
const pidfdThread = unix.O_EXCL

// openCaller returns a pidfd for the process of thread tid: tid's own when it leads its
// thread group (a single-threaded tool, the common case), a thread pidfd, or that of the
// thread group /proc names.
func openCaller(tid int) (int, error) {
	fd, err := unix.PidfdOpen(tid, 0)
	if !errors.Is(err, unix.EINVAL) {
		return fd, err // EINVAL: tid does not lead its group
	}
	if fd, err := unix.PidfdOpen(tid, pidfdThread); err == nil {
		return fd, nil
	}
	tgid, err := threadGroup(tid)
	if err != nil {
		return -1, err
	}
	return unix.PidfdOpen(tgid, 0)
}

// threadGroup is the process (thread group) that thread tid belongs to.
func threadGroup(tid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("no Tgid")
}

// parseSockaddr reads an IPv4 or IPv6 socket address (an IPv4-mapped IPv6 one as the
// IPv4 address it maps), and returns its family in any case.
func parseSockaddr(b []byte) (uint16, netip.AddrPort, bool) {
	family := binary.NativeEndian.Uint16(b)
	switch {
	case family == unix.AF_INET && len(b) >= unix.SizeofSockaddrInet4:
		addr := netip.AddrFrom4([4]byte(b[4:8]))
		return family, netip.AddrPortFrom(addr, binary.BigEndian.Uint16(b[2:4])), true
	case family == unix.AF_INET6 && len(b) >= unix.SizeofSockaddrInet6:
		addr := netip.AddrFrom16([16]byte(b[8:24])).Unmap()
		return family, netip.AddrPortFrom(addr, binary.BigEndian.Uint16(b[2:4])), true
	}
	return family, netip.AddrPort{}, false
}

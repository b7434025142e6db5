package worker

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"

	"github.com/agentrun/agentrun/sandbox"
	"golang.org/x/sys/unix"
)

// handOffPair returns the two ends of the socket that a worker with network sends a
// descriptor on (at level strict its loopback listener, at level landlock its seccomp
// filter's listener): the client keeps ours, the worker gets theirs as fdHandOff.
func handOffPair() (ours, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "hand-off"), os.NewFile(uintptr(fds[1]), "hand-off"), nil
}

// The tags of the descriptors stage 1 sends on fdHandOff.
const (
	handOffListener = 'L' // the listener on the sandbox's loopback (level strict)
	handOffConnects = 'S' // the seccomp filter's listener of connect(2) (level landlock)
)

// receiveListener takes the listener the worker sent on ours, which must be waiting:
// stage 1 sends it before it becomes stage 2.
func receiveListener(ours *os.File) (net.Listener, error) {
	fd, err := receiveFD(ours, handOffListener)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "sandbox loopback")
	defer func() { _ = f.Close() }()
	return net.FileListener(f) // a copy of the descriptor, in the runtime's poller
}

// receiveFD takes the descriptor tagged tag that the worker sent on ours, which must be
// waiting: stage 1 sends it before it becomes stage 2.
func receiveFD(ours *os.File, tag byte) (int, error) {
	raw, err := ours.SyscallConn()
	if err != nil {
		return -1, err
	}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	var rerr error
	if err := raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
		return true
	}); err != nil {
		return -1, err
	}
	if rerr != nil {
		return -1, fmt.Errorf("receive: %w", rerr)
	}
	fds, err := receivedFDs(oob[:oobn])
	if err != nil {
		return -1, fmt.Errorf("receive: %w", err)
	}
	if n != 1 || buf[0] != tag || len(fds) != 1 {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
		return -1, fmt.Errorf("the worker sent no descriptor %q", tag)
	}
	return fds[0], nil
}

// sendFD sends fd, tagged tag, on fdHandOff.
func sendFD(fd int, tag byte) error {
	return unix.Sendmsg(fdHandOff, []byte{tag}, unix.UnixRights(fd), nil, 0)
}

// serveConnects answers the connect(2) calls of a worker at level landlock, whose
// filter's listener came on ours, until stop is called: only the proxy's port on the
// host's loopback is connected to; every other address is refused and reported to
// refused. stop waits for the goroutine it ends.
func serveConnects(ours *os.File, proxyPort int, refused func(target string)) (stop func(), err error) {
	fd, err := receiveFD(ours, handOffConnects)
	if err != nil {
		return nil, err
	}
	if refused == nil {
		refused = func(string) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sandbox.ServeConnects(ctx, fd, netip.AddrPortFrom(proxyAddr, uint16(proxyPort)), refused)
	}()
	return func() { cancel(); <-done }, nil
}

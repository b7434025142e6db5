package worker

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// handOffPair returns the two ends of the socket that a worker at level strict with
// network sends its loopback listener on: the client keeps ours, the worker gets
// theirs as fdHandOff.
func handOffPair() (ours, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "hand-off"), os.NewFile(uintptr(fds[1]), "hand-off"), nil
}

// receiveListener takes the listener the worker sent on ours, which must be waiting:
// stage 1 sends it before it becomes stage 2.
func receiveListener(ours *os.File) (net.Listener, error) {
	raw, err := ours.SyscallConn()
	if err != nil {
		return nil, err
	}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	var rerr error
	if err := raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
		return true
	}); err != nil {
		return nil, err
	}
	if rerr != nil {
		return nil, fmt.Errorf("receive: %w", rerr)
	}
	fds, err := receivedFDs(oob[:oobn])
	if err != nil {
		return nil, fmt.Errorf("receive: %w", err)
	}
	if n != 1 || buf[0] != 'L' || len(fds) != 1 {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
		return nil, errors.New("the worker sent no listener")
	}
	f := os.NewFile(uintptr(fds[0]), "sandbox loopback")
	defer func() { _ = f.Close() }()
	return net.FileListener(f) // a copy of the descriptor, in the runtime's poller
}

//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioUringSocket makes a socket of family with io_uring's IORING_OP_SOCKET, which
// socket(2)'s seccomp rule never sees, and says "ok" when it got one, or the errno of
// the step that failed.
func ioUringSocket(family int) string {
	var params [120]byte // struct io_uring_params
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
	if e != 0 {
		return "setup " + unix.ErrnoName(e)
	}
	defer func() { _ = unix.Close(int(fd)) }()
	le := binary.LittleEndian
	sqEntries, cqEntries := le.Uint32(params[0:]), le.Uint32(params[4:])
	sqOff, cqOff := params[40:80], params[80:120] // io_sqring_offsets, io_cqring_offsets
	sqTail, sqMask, sqArray := le.Uint32(sqOff[4:]), le.Uint32(sqOff[8:]), le.Uint32(sqOff[24:])
	cqHead, cqMask, cqes := le.Uint32(cqOff[0:]), le.Uint32(cqOff[8:]), le.Uint32(cqOff[20:])
	const offSQRing, offCQRing, offSQEs = 0, 0x8000000, 0x10000000
	mapped := func(off, size int) []byte {
		b, err := unix.Mmap(int(fd), int64(off), size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return nil
		}
		return b
	}
	sq := mapped(offSQRing, int(sqArray+4*sqEntries))
	cq := mapped(offCQRing, int(cqes+16*cqEntries))
	sqes := mapped(offSQEs, int(64*sqEntries))
	if sq == nil || cq == nil || sqes == nil {
		return "mmap failed"
	}
	defer func() { _, _, _ = unix.Munmap(sq), unix.Munmap(cq), unix.Munmap(sqes) }()
	const opSocket = 45 // IORING_OP_SOCKET
	sqe := sqes[:64]
	sqe[0] = opSocket
	le.PutUint32(sqe[4:], uint32(family))           // fd: the domain
	le.PutUint64(sqe[8:], uint64(unix.SOCK_STREAM)) // off: the type
	tail := le.Uint32(sq[sqTail:])
	le.PutUint32(sq[sqArray+4*(tail&le.Uint32(sq[sqMask:])):], 0)
	le.PutUint32(sq[sqTail:], tail+1)
	const getEvents = 1 // IORING_ENTER_GETEVENTS
	if _, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, fd, 1, 1, getEvents, 0, 0); e != 0 {
		return "enter " + unix.ErrnoName(e)
	}
	head := le.Uint32(cq[cqHead:])
	cqe := cq[cqes+16*(head&le.Uint32(cq[cqMask:])):]
	res := int32(le.Uint32(cqe[8:]))
	if res < 0 {
		return "socket " + unix.ErrnoName(unix.Errno(-res))
	}
	_ = unix.Close(int(res))
	return "ok"
}

//go:build linux && (amd64 || arm64)

package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() {
	childScenarios["seccomp-sockets"] = socketsChild
}

// socketsChild allows NETLINK_ROUTE sockets, IPv4 TCP ones and nothing else, and no
// listen(2), and reports which sockets it can still make.
func socketsChild() int {
	if _, err := ApplySeccomp(Sockets{TCP: []int{unix.AF_INET}, Netlink: []int{unix.NETLINK_ROUTE}, NoListen: true}, Signals{}); err != nil {
		report("apply", err)
		return 1
	}
	report("apply", "ok")
	// try calls socket(2) itself, so that a family can carry bits above its low 32.
	try := func(key string, family uint64, typ int, proto ...uint64) {
		fd, _, errno := unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), uintptr(typ), uintptr(append(proto, 0)[0]))
		if errno != 0 {
			report(key, unix.ErrnoName(errno))
			return
		}
		_ = unix.Close(int(fd))
		report(key, "ok")
	}
	try("unix-stream", unix.AF_UNIX, unix.SOCK_STREAM)
	try("unix-dgram", unix.AF_UNIX, unix.SOCK_DGRAM)
	try("inet6", unix.AF_INET6, unix.SOCK_STREAM)
	try("inet", unix.AF_INET, unix.SOCK_STREAM)
	try("inet-tcp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP)
	try("inet-nonblock-cloexec", unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
	try("inet-udp", unix.AF_INET, unix.SOCK_DGRAM)
	try("inet-udp-nonblock", unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK)
	try("inet-ping", unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP)
	try("inet-mptcp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP)
	try("inet-sctp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP)
	// The kernel reads type and protocol as ints too.
	try("inet-udp-high-bits", unix.AF_INET, 1<<32|unix.SOCK_DGRAM)
	try("inet-mptcp-high-bits", unix.AF_INET, unix.SOCK_STREAM, 1<<32|unix.IPPROTO_MPTCP)
	try("netlink", unix.AF_NETLINK, unix.SOCK_RAW)
	try("netlink-dgram", unix.AF_NETLINK, unix.SOCK_DGRAM)
	try("netlink-route", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
	try("netlink-usersock", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_USERSOCK)
	try("netlink-sock-diag", unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_SOCK_DIAG)
	try("netlink-usersock-high-bits", unix.AF_NETLINK, unix.SOCK_RAW, 1<<32|unix.NETLINK_USERSOCK)
	// No network namespace confines vsock: in a VM it reaches the host's services.
	try("vsock", unix.AF_VSOCK, unix.SOCK_STREAM)
	try("alg", unix.AF_ALG, unix.SOCK_SEQPACKET)
	// The kernel reads the family as an int: bits above the low 32 must not hide it.
	try("unix-high-bits", 1<<32|unix.AF_UNIX, unix.SOCK_STREAM)
	try("inet6-high-bits", 1<<63|unix.AF_INET6, unix.SOCK_STREAM)
	report("io_uring-unix", ioUringSocket(unix.AF_UNIX))
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0); err == nil {
		// listen(2) alone would bind a free port of every address.
		report("inet-listen", errnoOf(unix.Listen(fd, 1)))
		_ = unix.Close(fd)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		report("socketpair", err)
	} else {
		report("socketpair", "ok")
		_ = unix.Close(fds[0])
		_ = unix.Close(fds[1])
	}
	return 0
}

// TestSeccompSocketFamilies checks that only the sockets ApplySeccomp allows are made
// (and that listen(2) is refused),
// on the real kernel: NETLINK_ROUTE's of any type (no other netlink protocol), IPv4 TCP alone (no UDP, ping, Multipath
// TCP or SCTP), whatever the bits above an argument's 32 and through io_uring too (whose
// rings the filter refuses), while socketpair still works.
func TestSeccompSocketFamilies(t *testing.T) {
	got := runChild(t, "seccomp-sockets")
	require.Equal(t, "ok", got["apply"])
	assert.Equal(t, map[string]string{"apply": "ok", "unix-stream": "EPERM", "unix-dgram": "EPERM", "inet6": "EPERM",
		"inet": "ok", "socketpair": "ok", "unix-high-bits": "EPERM", "inet6-high-bits": "EPERM",
		"io_uring-unix": "setup EPERM", "netlink": "ok", "vsock": "EPERM", "alg": "EPERM",
		"inet-tcp": "ok", "inet-nonblock-cloexec": "ok", "inet-udp": "EPERM", "inet-udp-nonblock": "EPERM",
		"inet-ping": "EPERM", "inet-mptcp": "EPERM", "inet-sctp": "EPERM", "inet-udp-high-bits": "EPERM",
		"inet-mptcp-high-bits": "EPERM", "netlink-dgram": "ok", "inet-listen": "EPERM",
		"netlink-route": "ok", "netlink-usersock": "EPERM", "netlink-sock-diag": "EPERM", "netlink-usersock-high-bits": "EPERM"}, got)
}

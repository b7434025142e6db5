package escape_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/sandbox/netproxy"
	"github.com/agentrun/agentrun/worker"
)

// hostServer is a stream listener on the host that counts the connections it accepts,
// answering each like a tiny HTTP server. The test's own sentinel connections are told
// apart and not counted: connections are accepted in order, so once a sentinel has
// been seen every earlier connection has been counted.
type hostServer struct {
	l     net.Listener
	n     atomic.Int64
	mu    sync.Mutex
	seen  map[string]bool
	dial  func() (net.Conn, error)
	label string
}

func serveHost(t *testing.T, label string, l net.Listener, dial func() (net.Conn, error)) *hostServer {
	t.Helper()
	s := &hostServer{l: l, seen: map[string]bool{}, dial: dial, label: label}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.handle(c)
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
	})
	return s
}

func (s *hostServer) handle(c net.Conn) {
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if tok, ok := strings.CutPrefix(line, "SENTINEL "); ok {
		s.mu.Lock()
		s.seen[strings.TrimSpace(tok)] = true
		s.mu.Unlock()
		return
	}
	s.n.Add(1)
	_, _ = fmt.Fprint(c, "HTTP/1.0 200 OK\r\nContent-Length: 13\r\n\r\nhost-reached\n")
}

// count waits until every connection made so far has been accepted, and returns how
// many were not the test's own.
func (s *hostServer) count(t *testing.T) int64 {
	t.Helper()
	tok := randomHex(8)
	c, err := s.dial()
	require.NoError(t, err, "sentinel to %s", s.label)
	_, err = fmt.Fprintf(c, "SENTINEL %s\n", tok)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.seen[tok]
	}, 10*time.Second, 5*time.Millisecond, "the sentinel to %s was not accepted", s.label)
	return s.n.Load()
}

// unreached: the server must get no connection from the attempt.
func unreached(s *hostServer) effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		before := s.count(t)
		return func(string) (bool, string) {
			if n := s.count(t) - before; n > 0 {
				return false, fmt.Sprintf("%d connection(s) reached the host's %s", n, s.label)
			}
			return true, ""
		}
	}
}

// udpUnreached: the host's UDP socket must get no datagram from the attempt.
func udpUnreached(u *net.UDPConn) effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		return func(string) (bool, string) {
			tok := "SENTINEL " + randomHex(8)
			c, err := net.Dial("udp", u.LocalAddr().String())
			require.NoError(t, err)
			_, err = c.Write([]byte(tok))
			require.NoError(t, err)
			require.NoError(t, c.Close())
			require.NoError(t, u.SetReadDeadline(time.Now().Add(10*time.Second)))
			var others int
			buf := make([]byte, 2048)
			for {
				n, _, err := u.ReadFrom(buf)
				require.NoError(t, err, "the UDP sentinel did not arrive")
				if string(buf[:n]) == tok {
					break
				}
				others++
			}
			if others > 0 {
				return false, fmt.Sprintf("%d datagram(s) reached the host's UDP socket", others)
			}
			return true, ""
		}
	}
}

// hostTCP serves on the host's loopback.
func hostTCP(t *testing.T) *hostServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return serveHost(t, "loopback TCP server", l, func() (net.Conn, error) { return net.Dial("tcp", l.Addr().String()) })
}

// hostUnix serves on a unix socket at path (a name beginning with @ is abstract).
func hostUnix(t *testing.T, label, path string) *hostServer {
	t.Helper()
	l, err := net.Listen("unix", path)
	require.NoError(t, err)
	return serveHost(t, label, l, func() (net.Conn, error) { return net.Dial("unix", path) })
}

// unixRequest is Python that sends a request on the unix socket s to the path %s and
// prints the reply.
const unixRequest = `s.settimeout(5); s.connect('%s'); s.sendall(b'GET / HTTP/1.0\r\n\r\n'); print(s.recv(100))`

// pythonUnix connects to a unix socket and prints the reply.
const pythonUnix = `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); ` + unixRequest + `"`

// pythonHighBits makes a socket of family and type (Python's names) with socket(2)
// called directly, the family with a bit set above its low 32, which the kernel drops
// (it reads an int): a filter that compares all 64 bits lets it through. Then it runs
// use, which has the socket as s.
func pythonHighBits(family, typ, use string) string {
	return `python3 -c "
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
nr = {'x86_64': 41, 'aarch64': 198}[os.uname().machine]
L = ctypes.c_long
fd = libc.syscall(L(nr), L((1 << 32) | socket.` + family + `), L(socket.` + typ + `), L(0))
if fd < 0: raise SystemExit('socket: ' + os.strerror(ctypes.get_errno()))
s = socket.socket(fileno=fd)
` + use + `"`
}

// pythonMPTCP connects a Multipath TCP socket to the host's web server, which talks
// plain TCP: the kernel falls back to it, but Landlock's TCP rules apply to sockets of
// IPPROTO_TCP alone.
const pythonMPTCP = `python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
s.settimeout(5)
s.connect(('127.0.0.1', {PORT}))
s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n')
print(s.recv(100))"`

// printed: s is not reached, and the output holds want: what the tool may do still
// works.
func printed(s *hostServer, want string) effect {
	return answeredBy(s, 1, want)
}

// answeredBy: s is not reached, and the output holds n lines of status, the proxy's
// answers to n connections the sandbox made for the tool at once.
func answeredBy(s *hostServer, n int, status string) effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		check := unreached(s)(t, fx, x)
		return func(out string) (bool, string) {
			assert.Equal(t, n, strings.Count(out, status+"\n"), "lines of %q; output:\n%s", status, out)
			return check(out)
		}
	}
}

// pythonListen calls listen(2) on a fresh socket of family, which binds it to a free
// port of every address without bind(2), writes the port to file and leaves a child
// that waits 10 s for a connection on it.
func pythonListen(family, file string) string {
	return `python3 -c "
import os, socket, sys
s = socket.socket(socket.` + family + `)
s.listen()
open('` + file + `', 'w').write(str(s.getsockname()[1]))
if os.fork():
    sys.exit(0)
s.settimeout(10)
s.accept()"`
}

// notListening: no port is written to file, or the host cannot connect to it on addr,
// where a tool's listener would serve anyone who can reach the machine.
func notListening(file, addr string) effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		path := x.expand(file)
		return func(string) (bool, string) {
			b, err := os.ReadFile(path)
			if err != nil {
				return true, ""
			}
			c, err := net.DialTimeout("tcp", net.JoinHostPort(addr, strings.TrimSpace(string(b))), 2*time.Second)
			if err != nil {
				return true, ""
			}
			_ = c.Close()
			return false, "a tool's listener on port " + string(b) + " accepted a connection from the host"
		}
	}
}

// hostNetlink is a host daemon's netlink socket of protocol (NETLINK_USERSOCK, which
// any process of the host's network namespace may send to, or NETLINK_ROUTE), in the
// multicast groups groups, and its port id.
func hostNetlink(t *testing.T, protocol int, groups uint32) (int, uint32) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, protocol)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Close(fd) })
	require.NoError(t, unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}))
	sa, err := unix.Getsockname(fd)
	require.NoError(t, err)
	return fd, sa.(*unix.SockaddrNetlink).Pid
}

// pythonUsersock sends a netlink message to the host's usersock socket {NLPORT}.
const pythonUsersock = `python3 -c "
import socket, struct
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 2)
msg = b'exfiltrated'
s.sendto(struct.pack('=IHHII', 16 + len(msg), 0x10, 0, 1, 0) + msg, ({NLPORT}, 0))
print('sent')"`

// routeGroup is the multicast group of NETLINK_ROUTE the attempts send to: DECnet's
// addresses (RTMGRP_DECnet_IFADDR), which no kernel of today sends anything to.
const routeGroup = 0x1000

// pythonRoute sends a netlink message on a NETLINK_ROUTE socket: to port id and
// multicast groups (as a bit mask), with sendto or, when connected is set, with
// connect and send.
func pythonRoute(port string, groups int, connected bool) string {
	send := "s.sendto(m, (" + port + ", " + strconv.Itoa(groups) + "))"
	if connected {
		send = "s.connect((" + port + ", " + strconv.Itoa(groups) + ")); s.send(m)"
	}
	return `python3 -c "
import socket, struct
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
msg = b'forged'
m = struct.pack('=IHHII', 16 + len(msg), 0x10, 0, 1, 0) + msg
` + send + `
print('sent')"`
}

// netlinkUnreached: the netlink socket fd gets no message from the attempt (sendto
// queues a unicast message at once, so one sent is there when the call returns).
func netlinkUnreached(fd int) effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		buf := make([]byte, 4096)
		for { // what an earlier attempt left
			if _, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT); err != nil {
				break
			}
		}
		return func(string) (bool, string) {
			n, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
			if errors.Is(err, unix.EAGAIN) {
				return true, ""
			}
			require.NoError(t, err)
			return false, fmt.Sprintf("the host's netlink socket got a %d-byte message", n)
		}
	}
}

// pythonFlip connects 300 times from one thread with an address another thread flips
// between the proxy's and another host's at the proxy's port, all through connect: a
// sandbox that checked the address and then let the kernel read it again would connect
// to the other host now and then.
const pythonFlip = `python3 -c "
import ctypes, socket, struct, threading
libc = ctypes.CDLL(None, use_errno=True)
def sa(ip):
    return struct.pack('=H', socket.AF_INET) + struct.pack('!H', {PPORT}) + socket.inet_aton(ip) + bytes(8)
good, bad = sa('127.0.0.1'), sa('127.0.0.2')
buf = ctypes.create_string_buffer(good, 16)
stop = []
def flip():
    while not stop:
        ctypes.memmove(buf, bad, 16)
        ctypes.memmove(buf, good, 16)
t = threading.Thread(target=flip)
t.start()
ok = refused = 0
for i in range(300):
    s = socket.socket()
    if libc.connect(s.fileno(), buf, 16) == 0:
        ok += 1
    else:
        refused += 1
    s.close()
stop.append(1)
t.join()
print('connected', ok, 'refused', refused)"`

// pythonFastOpen opens a TCP connection to host:port with sendto(2) and MSG_FASTOPEN,
// which connects without connect(2), and prints the reply.
func pythonFastOpen(host, port string) string {
	return `python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.sendto(b'GET / HTTP/1.0\\r\\n\\r\\n', 0x20000000, ('` + host + `', ` + port + `))
s.settimeout(5)
print(s.recv(100))"`
}

// pythonVsockBind binds a vsock port and keeps it in a child that outlives the call:
// no network namespace confines vsock, whose ports are the machine's.
const pythonVsockBind = `python3 -c "
import os, socket, time
s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
s.bind((socket.VMADDR_CID_ANY, {VPORT}))
if os.fork() == 0: time.sleep(30)" > /dev/null 2>&1`

// vsockUnbound: no socket of the attempt's may hold the vsock port, which the host then
// binds itself.
func vsockUnbound(port uint32) effect {
	bind := func() error {
		fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer func() { _ = unix.Close(fd) }()
		return unix.Bind(fd, &unix.SockaddrVM{CID: unix.VMADDR_CID_ANY, Port: port})
	}
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		err := bind()
		if errors.Is(err, unix.EAFNOSUPPORT) {
			t.Skip("this machine has no vsock")
		}
		require.NoError(t, err, "the host cannot bind vsock port %d before the attempt", port)
		return func(string) (bool, string) {
			if err := bind(); errors.Is(err, unix.EADDRINUSE) {
				return false, fmt.Sprintf("a tool's vsock socket holds port %d", port)
			} else if err != nil {
				t.Fatalf("bind vsock port %d: %v", port, err)
			}
			return true, ""
		}
	}
}

func TestNetworkClosed(t *testing.T) {
	if testing.Short() {
		t.Skip("tries every way out to the network at each level (not with -short)")
	}
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0407"})
		web := hostTCP(t)
		hostSock := filepath.Join(fx.host, "h.sock")
		extSock := filepath.Join(fx.outside, "e.sock")
		abstract := "@agentrun-escape-" + randomHex(6)
		hostOnly := hostUnix(t, "unix socket in no scope", hostSock)
		external := hostUnix(t, "unix socket in the readable external scope", extSock)
		abs := hostUnix(t, "abstract unix socket", abstract)
		udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(t, err)
		t.Cleanup(func() { _ = udp.Close() })
		port := strconv.Itoa(web.l.Addr().(*net.TCPAddr).Port)
		nl, nlPort := hostNetlink(t, unix.NETLINK_USERSOCK, 0)
		fx.placeholders = append(fx.placeholders, "{NLPORT}", strconv.Itoa(int(nlPort)))
		vport := 20000 + uint32(rand.IntN(40000))
		fx.placeholders = append(fx.placeholders, "{PORT}", port, "{UPORT}", strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port),
			"{VPORT}", strconv.Itoa(int(vport)))
		table := []attempt{
			{name: "curl loopback", needs: "curl", cmd: "curl -sS --max-time 5 http://127.0.0.1:{PORT}/", effect: unreached(web), strict: true, landlock: true, off: true},
			{name: "curl download", needs: "curl", cmd: "curl -sS --max-time 5 http://127.0.0.1:{PORT}/file -o {WS}/dl-{NAME}",
				effect: all(unreached(web), absent("{WS}/dl-{NAME}")), strict: true, landlock: true, off: true},
			{name: "python urllib", needs: "python3", cmd: `python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:{PORT}/', timeout=5).read())"`,
				effect: unreached(web), strict: true, landlock: true, off: true},
			{name: "bash dev tcp", cmd: "echo GET > /dev/tcp/127.0.0.1/{PORT}", effect: unreached(web), strict: true, landlock: true, off: true},
			{name: "bash dev tcp localhost", cmd: "echo GET > /dev/tcp/localhost/{PORT}", effect: unreached(web), strict: true, landlock: true, off: true},
			{name: "udp datagram", cmd: "echo data > /dev/udp/127.0.0.1/{UPORT}", effect: udpUnreached(udp), strict: true, landlock: true, off: true},
			{name: "unix socket in no scope", needs: "python3", cmd: fmt.Sprintf(pythonUnix, hostSock), effect: unreached(hostOnly), strict: true, landlock: true, off: true},
			{name: "unix socket in external scope", needs: "python3", cmd: fmt.Sprintf(pythonUnix, extSock), effect: unreached(external), strict: true, landlock: true, off: true},
			{name: "abstract unix socket", needs: "python3", cmd: fmt.Sprintf(pythonUnix, "\\0"+abstract[1:]), effect: unreached(abs), strict: true, landlock: true, off: true},
			{name: "vsock socket", needs: "python3", cmd: pythonVsockBind, effect: vsockUnbound(vport), strict: true, landlock: true, off: true},
			{name: "udp datagram, family in high bits", needs: "python3", cmd: pythonHighBits("AF_INET", "SOCK_DGRAM", "s.sendto(b'data', ('127.0.0.1', {UPORT}))"), effect: udpUnreached(udp), strict: true, landlock: true, off: true},
			{name: "netlink message to a host daemon's usersock socket", needs: "python3", cmd: pythonUsersock,
				effect: netlinkUnreached(nl), strict: true, landlock: true, off: true},
			{name: "unix socket, family in high bits", needs: "python3", cmd: pythonHighBits("AF_UNIX", "SOCK_STREAM", fmt.Sprintf(unixRequest, hostSock)), effect: unreached(hostOnly), strict: true, landlock: true, off: true},
		}
		runTable(t, fx, table)
	})
}

// TestNetworkAnyHost allows the network (0467) and any host, as a spec without
// network.allow does: the tools' way out is the public internet, not the host's own
// services on loopback (the test's server), the cloud's instance metadata on
// link-local, or the local network. The proxy refuses them before it connects, and
// says so. Until 2026-12-04 it reached them all.
func TestNetworkAnyHost(t *testing.T) {
	levels(t, false, func(t *testing.T, level sandbox.Level) {
		var mu sync.Mutex
		var details []string
		fx := newFixture(t, level, options{mode: "0467", allow: []string{}, onViolation: func(v netproxy.Violation) {
			mu.Lock()
			defer mu.Unlock()
			details = append(details, v.Detail)
		}})
		web := hostTCP(t)
		fx.placeholders = append(fx.placeholders, "{PORT}", strconv.Itoa(web.l.Addr().(*net.TCPAddr).Port))
		refused := func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
			check := unreached(web)(t, fx, x)
			mu.Lock()
			before := len(details)
			mu.Unlock()
			return func(out string) (bool, string) {
				mu.Lock()
				got := slices.Clone(details[before:])
				mu.Unlock()
				if assert.NotEmpty(t, got, "no violation was reported; output:\n%s", out) {
					assert.Contains(t, got[0], "an internal address", "output:\n%s", out)
				}
				return check(out)
			}
		}
		runTable(t, fx, []attempt{
			{name: "curl the host's loopback", needs: "curl", cmd: "curl -sS --max-time 5 --noproxy '' http://127.0.0.1:{PORT}/", effect: refused, strict: true, landlock: true},
			{name: "curl the host's loopback by name", needs: "curl", cmd: "curl -sS --max-time 5 --noproxy '' http://localhost:{PORT}/", effect: refused, strict: true, landlock: true},
			{name: "curl tunnel to the host's loopback", needs: "curl", cmd: "curl -sS --max-time 5 --noproxy '' -p http://127.0.0.1:{PORT}/", effect: refused, strict: true, landlock: true},
		})
	})
}

// TestNetworkProxy allows the network (0467) but only example.invalid: the test's
// proxy must refuse the test's loopback server, and say so. At level landlock a
// server on another host (127.0.0.2) at the proxy's port number, which Landlock's
// rule allows, must not be reached either, and the direct connection is reported.
func TestNetworkProxy(t *testing.T) {
	levels(t, false, func(t *testing.T, level sandbox.Level) {
		var mu sync.Mutex
		var details []string // of the violations reported, in order
		fx := newFixture(t, level, options{mode: "0467", allow: []string{"example.invalid"}, onViolation: func(v netproxy.Violation) {
			mu.Lock()
			defer mu.Unlock()
			details = append(details, v.Detail)
		}})
		reported := func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(details) }
		web := hostTCP(t)
		udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(t, err)
		t.Cleanup(func() { _ = udp.Close() })
		nl, nlPort := hostNetlink(t, unix.NETLINK_USERSOCK, 0)
		rt, rtPort := hostNetlink(t, unix.NETLINK_ROUTE, 0)
		group, _ := hostNetlink(t, unix.NETLINK_ROUTE, routeGroup)
		fx.placeholders = append(fx.placeholders, "{PORT}", strconv.Itoa(web.l.Addr().(*net.TCPAddr).Port),
			"{UPORT}", strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port), "{NLPORT}", strconv.Itoa(int(nlPort)),
			"{RTPORT}", strconv.Itoa(int(rtPort)))
		// refusedAt: s is not reached, and a violation of detail (a refusal of the proxy's
		// or the sandbox's, DetailDirect) is reported.
		refusedAt := func(s *hostServer, direct bool) effect {
			return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
				check := unreached(s)(t, fx, x)
				before := len(reported())
				return func(out string) (bool, string) {
					got := reported()[before:]
					if assert.NotEmpty(t, got, "no violation was reported; output:\n%s", out) {
						assert.Equal(t, direct, got[0] == netproxy.DetailDirect, "the violation %q; output:\n%s", got[0], out)
					}
					return check(out)
				}
			}
		}
		refused := func() effect { return refusedAt(web, false) }
		table := []attempt{
			{name: "curl through the proxy", needs: "curl", cmd: "curl -sS --max-time 5 --noproxy '' http://127.0.0.1:{PORT}/", effect: refused(), strict: true, landlock: true},
			{name: "curl tunnel through the proxy", needs: "curl", cmd: "curl -sS --max-time 5 --noproxy '' -p http://127.0.0.1:{PORT}/", effect: refused(), strict: true, landlock: true},
			{name: "python through the proxy", needs: "python3", cmd: `env -u no_proxy -u NO_PROXY python3 -c "
import os, urllib.request as u
h = u.ProxyHandler({'http': os.environ['HTTP_PROXY']})
print(u.build_opener(h).open('http://127.0.0.1:{PORT}/', timeout=5).read())"`, effect: refused(), strict: true, landlock: true},
			{name: "curl around the proxy", needs: "curl", cmd: "curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:{PORT}/", effect: unreached(web), strict: true, landlock: true},
			{name: "bash dev tcp around the proxy", cmd: "echo GET > /dev/tcp/127.0.0.1/{PORT}", effect: unreached(web), strict: true, landlock: true},
			{name: "udp datagram around the proxy", cmd: "echo data > /dev/udp/127.0.0.1/{UPORT}", effect: udpUnreached(udp), strict: true, landlock: true},
			{name: "mptcp around the proxy", needs: "python3", cmd: pythonMPTCP, effect: unreached(web), strict: true, landlock: true},
			{name: "tcp fast open around the proxy", needs: "python3", cmd: pythonFastOpen("127.0.0.1", "{PORT}"), effect: unreached(web), strict: true, landlock: true},
			{name: "netlink message to a host daemon's usersock socket", needs: "python3", cmd: pythonUsersock, effect: netlinkUnreached(nl), strict: true, landlock: true},
			// NETLINK_ROUTE, which the filter lets tools have: the kernel refuses a
			// sender without CAP_NET_ADMIN any destination but itself, and agentrun,
			// which makes the connects at landlock, must not lend it its own.
			{name: "route message sent to a host daemon's route socket", needs: "python3", cmd: pythonRoute("{RTPORT}", 0, false), effect: netlinkUnreached(rt), strict: true, landlock: true},
			{name: "route socket connected to a host daemon's", needs: "python3", cmd: pythonRoute("{RTPORT}", 0, true), effect: netlinkUnreached(rt), strict: true, landlock: true},
			{name: "route message sent to a multicast group", needs: "python3", cmd: pythonRoute("0", routeGroup, false), effect: netlinkUnreached(group), strict: true, landlock: true},
			{name: "route socket connected to a multicast group", needs: "python3", cmd: pythonRoute("0", routeGroup, true), effect: netlinkUnreached(group), strict: true, landlock: true},
		}
		if port := fx.proxyPort; port > 0 {
			// Landlock's rule allows the proxy's port, on any host.
			l, err := net.Listen("tcp", "127.0.0.2:"+strconv.Itoa(port))
			require.NoError(t, err)
			other := serveHost(t, "server at the proxy's port of another host", l, func() (net.Conn, error) { return net.Dial("tcp", l.Addr().String()) })
			fx.placeholders = append(fx.placeholders, "{PPORT}", strconv.Itoa(port))
			table = append(table,
				attempt{name: "curl to the proxy's port of another host", needs: "curl", cmd: "curl -sS --max-time 5 --noproxy '*' http://127.0.0.2:{PPORT}/",
					effect: refusedAt(other, true), landlock: true},
				attempt{name: "bash dev tcp to the proxy's port of another host", cmd: "echo GET > /dev/tcp/127.0.0.2/{PPORT}", effect: refusedAt(other, true), landlock: true},
				attempt{name: "ipv4-mapped ipv6 to the proxy's port of another host", needs: "python3", cmd: `python3 -c "
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(('::ffff:127.0.0.2', {PPORT}))
s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n')
print(s.recv(100))"`, effect: refusedAt(other, true), landlock: true},
				attempt{name: "tcp fast open to the proxy's port of another host", needs: "python3", cmd: pythonFastOpen("127.0.0.2", "{PPORT}"), effect: unreached(other), landlock: true},
				attempt{name: "curl through the proxy still works", needs: "curl", cmd: "curl -sS --max-time 5 --noproxy '' http://127.0.0.2:{PPORT}/",
					effect: refusedAt(other, false), landlock: true},
				attempt{name: "a listener bound by listen alone", needs: "python3", cmd: pythonListen("AF_INET", "{WS}/lport-{NAME}"),
					effect: notListening("{WS}/lport-{NAME}", "127.0.0.1"), landlock: true},
				attempt{name: "an ipv6 listener bound by listen alone", needs: "python3", cmd: pythonListen("AF_INET6", "{WS}/lport-{NAME}"),
					effect: notListening("{WS}/lport-{NAME}", "::1"), landlock: true},
				attempt{name: "an address flipped to another host during connect", needs: "python3", cmd: pythonFlip,
					effect: unreached(other), landlock: true},
				attempt{name: "a netlink socket still connects to the kernel", needs: "python3",
					cmd:    `python3 -c "import socket; s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0); s.connect((0, 0)); print('netlink-connected')"`,
					effect: printed(other, "netlink-connected"), landlock: true},
				attempt{name: "forty connections at once through the proxy", needs: "curl",
					cmd:    "for i in $(seq 40); do curl -s -o /dev/null -w '%{http_code}\\n' --max-time 10 --noproxy '' http://127.0.0.2:{PPORT}/ & done; wait",
					effect: answeredBy(other, 40, "403"), landlock: true},
			)
		}
		runTable(t, fx, table)
	})
}

// serveProxy serves a proxy for the fixture as the runner does (worker.ServeProxy),
// until the test ends.
func serveProxy(t *testing.T, cfg *worker.Config, o options) func(net.Listener) {
	t.Helper()
	allow, err := netproxy.ParseAllowlist(o.allow)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	serve, err := worker.ServeProxy(ctx, &wg, netproxy.New(allow, o.onViolation, nil), cfg)
	require.NoError(t, err)
	return serve
}

//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() {
	childScenarios["connects"] = connectsChild
}

// connectsChild hands its connect(2) calls to a listener it sends its parent on fd 3,
// then connects to CONNECTS_ALLOW (blocking; non-blocking and close-on-exec) and to
// CONNECTS_OTHER, and reports how each went.
func connectsChild() int {
	l, err := ApplySeccomp(Sockets{TCP: []int{unix.AF_INET}, Connect: true}, Signals{})
	if err != nil {
		report("apply", err)
		return 1
	}
	if err := unix.Sendmsg(3, []byte{'S'}, unix.UnixRights(int(l.Fd())), nil, 0); err != nil {
		report("send", err)
		return 1
	}
	_, _ = l.Close(), unix.Close(3)
	addr := func(env string) *unix.SockaddrInet4 {
		ap := netip.MustParseAddrPort(os.Getenv(env))
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	allow, other := addr("CONNECTS_ALLOW"), addr("CONNECTS_OTHER")

	s, _ := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	report("blocking", errnoOf(unix.Connect(s, allow)))
	buf := make([]byte, 6)
	n, _ := unix.Read(s, buf)
	report("blocking-read", strings.TrimSpace(string(buf[:n])))

	s, _ = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err := unix.Connect(s, allow); err != nil && err != unix.EINPROGRESS {
		report("nonblocking", errnoOf(err))
	} else {
		report("nonblocking", "ok")
	}
	fl, _ := unix.FcntlInt(uintptr(s), unix.F_GETFL, 0)
	report("nonblocking-kept", fl&unix.O_NONBLOCK != 0)
	fd, _ := unix.FcntlInt(uintptr(s), unix.F_GETFD, 0)
	report("cloexec-kept", fd&unix.FD_CLOEXEC != 0)

	s, _ = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	report("other", errnoOf(unix.Connect(s, other)))
	return 0
}

// TestServeConnects runs a child whose connect(2) calls ServeConnects answers, both
// ways: taking the child's socket (pidfd_getfd) and, where that is refused as a
// container's seccomp profile refuses it, installing a socket of its own. Either way
// the allowed address is connected with the socket's flags kept, and the other one is
// refused, reported and never reached.
func TestServeConnects(t *testing.T) {
	for name, take := range map[string]takeFunc{
		"taken":     takeSocket,
		"installed": func(syscall.RawConn, seccompNotif, int) (int, syscall.Errno) { return -1, unix.EPERM },
	} {
		t.Run(name, func(t *testing.T) {
			allowed := listen(t, "127.0.0.1:0", func(c net.Conn) { _, _ = io.WriteString(c, "hello\n") })
			var reached atomic.Int64
			other := listen(t, "127.0.0.2:0", func(net.Conn) { reached.Add(1) })
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
			require.NoError(t, err)
			ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
			defer func() { _ = ours.Close() }()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"=connects", "CONNECTS_ALLOW="+allowed, "CONNECTS_OTHER="+other)
			cmd.ExtraFiles = []*os.File{theirs}
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			_ = theirs.Close()
			buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
			_, oobn, _, _, err := unix.Recvmsg(int(ours.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
			require.NoError(t, err, "the child's listener; output:\n%s", &out)
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			got, err := unix.ParseUnixRights(&msgs[0])
			require.NoError(t, err)
			require.Len(t, got, 1)
			var mu sync.Mutex
			var refused []string
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Go(func() {
				assert.NoError(t, serveConnects(ctx, got[0], netip.MustParseAddrPort(allowed), func(target string) {
					mu.Lock()
					defer mu.Unlock()
					refused = append(refused, target)
				}, take))
			})
			require.NoError(t, cmd.Wait(), "output:\n%s", &out)
			cancel()
			wg.Wait()
			report := map[string]string{}
			sc := bufio.NewScanner(strings.NewReader(out.String()))
			for sc.Scan() {
				if k, v, ok := strings.Cut(sc.Text(), "="); ok {
					report[k] = v
				}
			}
			assert.Equal(t, map[string]string{"blocking": "ok", "blocking-read": "hello", "nonblocking": "ok",
				"nonblocking-kept": "true", "cloexec-kept": "true", "other": "EACCES"}, report)
			assert.Equal(t, []string{other}, refused)
			assert.Zero(t, reached.Load(), "the other address was reached")
		})
	}
}

// listen serves TCP on addr until the test ends, handing each connection to handle
// (which the listener then closes), and returns its address.
func listen(t *testing.T, addr string, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			handle(c)
			_ = c.Close()
		}
	})
	t.Cleanup(func() { _ = l.Close(); wg.Wait() })
	return l.Addr().String()
}

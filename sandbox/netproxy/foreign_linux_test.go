package netproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/sandbox"
)

// listenElsewhere listens on addr in a new network namespace, as a worker at level
// strict does on the sandbox's loopback, and connects a client to it from there. The
// thread that made the namespace ends with its goroutine, still locked.
func listenElsewhere(t *testing.T, addr string) (net.Listener, net.Conn) {
	t.Helper()
	type made struct {
		l   net.Listener
		c   net.Conn
		err error
	}
	ch := make(chan made, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is in the other namespace
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- made{err: err}
			return
		}
		if err := sandbox.LoopbackUp(); err != nil {
			ch <- made{err: err}
			return
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			ch <- made{err: err}
			return
		}
		c, err := net.Dial("tcp", addr) // the backlog takes it before Accept
		if err != nil {
			_ = l.Close()
		}
		ch <- made{l, c, err}
	}()
	m := <-ch
	if errors.Is(m.err, unix.EPERM) {
		t.Skipf("no network namespace of its own here: %v", m.err)
	}
	require.NoError(t, m.err)
	t.Cleanup(func() { _ = m.c.Close() })
	return m.l, m.c
}

// TestForeignListener checks that a listener of another network namespace, which has the
// same address there as an allowed service on the proxy's loopback, does not make that
// service "the proxy itself": a tool behind the sandbox's loopback reaches it.
func TestForeignListener(t *testing.T) {
	up := echo(t) // 127.0.0.1:P here
	l, c := listenElsewhere(t, up)
	allow, err := ParseAllowlist([]string{"127.0.0.1"})
	require.NoError(t, err)
	var mu sync.Mutex
	var vs []Violation
	p := New(allow, func(v Violation) { mu.Lock(); vs = append(vs, v); mu.Unlock() }, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Serve(ctx, l) })
	defer func() { cancel(); wg.Wait() }()

	_, err = io.WriteString(c, connectRequest(up))
	require.NoError(t, err)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode, "the tunnel to %s opens", up)
	_, err = io.WriteString(c, "ping")
	require.NoError(t, err)
	b := make([]byte, 4)
	_, err = io.ReadFull(br, b)
	require.NoError(t, err)
	assert.Equal(t, "ping", string(b), "the bytes came back from the service on the proxy's loopback")
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, vs)
}

package netproxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tunnel opens a CONNECT tunnel to target through the proxy or forwarder at addr.
func tunnel(tb testing.TB, addr, target string) (net.Conn, *bufio.Reader) {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(tb, err)
	_, err = io.WriteString(c, connectRequest(target))
	require.NoError(tb, err)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	require.NoError(tb, err)
	require.Equal(tb, http.StatusOK, resp.StatusCode)
	require.NoError(tb, resp.Body.Close(), "a 2xx CONNECT reply has no body: the tunnel stays open")
	return c, br
}

func TestTunnelHalfClose(t *testing.T) {
	r := newRig(t, "127.0.0.1")
	c, br := tunnel(t, r.fwd, echo(t))
	defer func() { _ = c.Close() }()
	_, err := io.WriteString(c, "ping")
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	b, err := io.ReadAll(br)
	require.NoError(t, err)
	assert.Equal(t, "ping", string(b), "the echo's reply arrives after the client half-closed, then EOF")
}

func TestServeStopClosesTunnels(t *testing.T) {
	up := echo(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var serveErr error
	wg.Go(func() { serveErr = New(mustAllow(t, "127.0.0.1"), nil, nil).Serve(ctx, l) })
	c, br := tunnel(t, l.Addr().String(), up)
	defer func() { _ = c.Close() }()
	_, err = io.WriteString(c, "x")
	require.NoError(t, err)
	_, err = br.ReadByte()
	require.NoError(t, err, "the tunnel works")

	cancel()
	wg.Wait()
	assert.NoError(t, serveErr, "Serve returns nil when its context ends")
	_, err = br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "stopping closed the open tunnel")
	_, err = net.Dial("tcp", l.Addr().String())
	assert.Error(t, err, "stopping closed the listener")
}

func TestServeListenerClosed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, l.Close())
	assert.NoError(t, New(Allowlist{}, nil, nil).Serve(context.Background(), l))
}

func TestLoopRefused(t *testing.T) {
	var mu sync.Mutex
	var vs []Violation
	p := New(mustAllow(t, "127.0.0.1"), func(v Violation) { mu.Lock(); vs = append(vs, v); mu.Unlock() }, nil)
	l, err := p.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Serve(ctx, l) })
	defer func() { cancel(); wg.Wait() }()

	self := l.Addr().String()
	status, body := raw(t, self, connectRequest(self))
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, body, "connection to "+self+" refused: it is the sandbox's proxy")
	status, _ = raw(t, self, "GET http://"+self+"/ HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.Equal(t, http.StatusForbidden, status)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []Violation{{KindNetworkDenied, self, "the proxy itself"}, {KindNetworkDenied, self, "the proxy itself"}}, vs)
}

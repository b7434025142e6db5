package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rig is a proxy on a listener on 127.0.0.1, as the runner serves it on the loopback
// listener a strict sandbox's worker hands over.
type rig struct {
	fwd string // the proxy's host:port, as tools inside the sandbox dial it
	vs  violations
}

func newRig(tb testing.TB, allow ...string) *rig {
	tb.Helper()
	a, err := ParseAllowlist(allow)
	require.NoError(tb, err)
	r := &rig{}
	p := New(a, r.vs.add, nil)
	tl, err := p.Listen("127.0.0.1:0")
	require.NoError(tb, err)
	r.fwd = tl.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var serveErr error
	wg.Go(func() { serveErr = p.Serve(ctx, tl) })
	tb.Cleanup(func() {
		cancel()
		wg.Wait()
		require.NoError(tb, serveErr)
	})
	return r
}

func (r *rig) violations() []Violation { return r.vs.all() }

// client is an HTTP client whose proxy is the rig's forwarder.
func (r *rig) client(tb testing.TB, tr *http.Transport) *http.Client {
	tb.Helper()
	if tr == nil {
		tr = &http.Transport{}
	}
	tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: r.fwd})
	tb.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// raw sends request as written to addr and reads one response and its body.
func raw(tb testing.TB, addr, request string) (status int, body string) {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(tb, err)
	defer func() { assert.NoError(tb, c.Close()) }()
	_, err = io.WriteString(c, request)
	require.NoError(tb, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(tb, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	require.NoError(tb, resp.Body.Close())
	return resp.StatusCode, string(b)
}

func connectRequest(target string) string {
	return fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
}

// hostOf is the host:port of an httptest server's URL.
func hostOf(tb testing.TB, u string) string {
	tb.Helper()
	p, err := url.Parse(u)
	require.NoError(tb, err)
	return p.Host
}

// echo serves TCP on 127.0.0.1, writing back what it reads, until the test ends.
func echo(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = serve(ctx, l, func(_ context.Context, _ *tracker, c net.Conn) { _, _ = io.Copy(c, c) })
	})
	tb.Cleanup(func() { cancel(); wg.Wait() })
	return l.Addr().String()
}

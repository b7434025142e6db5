package netproxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGroupRefusesChaining has a tool of session A, whose allowlist lets it reach the
// host's loopback, tunnel through its own proxy into session B's proxy and ask that one
// for a host only B's allowlist holds (an echo server on 127.0.0.2). Proxies of one
// group refuse the first hop, so the echo server never sees a connection; proxies of
// separate groups let the chain through, which is the hole a run's group closes.
func TestGroupRefusesChaining(t *testing.T) {
	cases := map[string]struct {
		shared  bool
		reached bool
	}{
		"one group":       {shared: true, reached: false},
		"separate groups": {shared: false, reached: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hidden, accepted := countingEcho(t, "127.0.0.2:0")
			var vs violations
			ga, gb := NewGroup(), NewGroup()
			if tc.shared {
				gb = ga
			}
			a := serveOn(t, ga.New(mustAllow(t, "127.0.0.1"), vs.add, nil))
			b := serveOn(t, gb.New(mustAllow(t, "127.0.0.2"), nil, nil))

			c, err := net.Dial("tcp", a)
			require.NoError(t, err)
			defer func() { assert.NoError(t, c.Close()) }()
			br := bufio.NewReader(c)
			status := hop(t, c, br, b)
			if !tc.reached {
				assert.Equal(t, http.StatusForbidden, status)
				assert.Equal(t, []Violation{{KindNetworkDenied, b, detailGroup}}, vs.all())
				assert.Zero(t, accepted.Load(), "the echo server B's allowlist holds was reached through A's proxy")
				return
			}
			require.Equal(t, http.StatusOK, status, "the first hop, into B's proxy")
			require.Equal(t, http.StatusOK, hop(t, c, br, hidden), "the second hop, through B's proxy")
			_, err = io.WriteString(c, "ping\n")
			require.NoError(t, err)
			line, err := br.ReadString('\n')
			require.NoError(t, err)
			assert.Equal(t, "ping\n", line)
			assert.Empty(t, vs.all())
		})
	}
}

// TestGroupForgetsStoppedProxy checks that a proxy that stopped serving leaves the
// group: its port, which the kernel may give to a host service next, is dialled again.
func TestGroupForgetsStoppedProxy(t *testing.T) {
	g := NewGroup()
	p := g.New(Allowlist{}, nil, nil)
	l, err := p.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Serve(ctx, l) })
	up, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	assert.Same(t, p, g.server(up), "while it serves")
	cancel()
	wg.Wait()
	assert.Nil(t, g.server(up), "once it stopped")
	assert.NoError(t, up.Close())
}

// hop sends a CONNECT for target on c and returns the status of the answer, whose
// headers it reads through br.
func hop(t *testing.T, c net.Conn, br *bufio.Reader, target string) int {
	t.Helper()
	_, err := io.WriteString(c, connectRequest(target))
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	return resp.StatusCode
}

// serveOn serves p on a port of 127.0.0.1 until the test ends and returns its address.
func serveOn(t *testing.T, p *Proxy) string {
	t.Helper()
	l, err := p.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Serve(ctx, l) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return l.Addr().String()
}

// countingEcho serves TCP on addr, writing back what it reads, and counts the
// connections it accepts.
func countingEcho(t *testing.T, addr string) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	var n atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = serve(ctx, l, func(_ context.Context, _ *tracker, c net.Conn) { n.Add(1); _, _ = io.Copy(c, c) })
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return l.Addr().String(), &n
}

func mustAllow(t *testing.T, hosts ...string) Allowlist {
	t.Helper()
	a, err := ParseAllowlist(hosts)
	require.NoError(t, err)
	return a
}

// violations collects the violations a proxy reports, from its goroutines.
type violations struct {
	mu sync.Mutex
	vs []Violation
}

func (v *violations) add(x Violation) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.vs = append(v.vs, x)
}

func (v *violations) all() []Violation {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]Violation(nil), v.vs...)
}

package netproxy

import (
	"context"
	"net"
	"sync"
)

// Group is the proxies of one run. None of them dials an address another one serves:
// a tool allowed to reach the host's loopback could otherwise tunnel through its own
// proxy into another session's, and on to the hosts that session's allowlist lets
// through.
type Group struct {
	mu sync.Mutex
	// byPort holds, by port and then by address, the TCP listeners the group's proxies
	// serve: a dial is checked against those of its port alone.
	byPort map[int]map[string]served
}

// served is a listener's address and the proxy serving it.
type served struct {
	addr  *net.TCPAddr
	proxy *Proxy
}

// NewGroup returns an empty group.
func NewGroup() *Group { return &Group{byPort: map[int]map[string]served{}} }

// New returns a proxy of the group that allows hosts on allow, reports refusals to
// onViolation (which may be nil; it is called from connection goroutines,
// concurrently) and dials upstream with dial (nil: a net.Dialer with a 10s timeout,
// resolving names here, since the sandbox has no DNS).
func (g *Group) New(allow Allowlist, onViolation func(Violation), dial func(ctx context.Context, network, addr string) (net.Conn, error)) *Proxy {
	if onViolation == nil {
		onViolation = func(Violation) {}
	}
	if dial == nil {
		dial = defaultDial()
	}
	return &Proxy{allow: allow, onViolation: onViolation, dial: dial, group: g}
}

// add records that p serves a; the returned function forgets it.
func (g *Group) add(a *net.TCPAddr, p *Proxy) func() {
	k := a.String()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byPort[a.Port] == nil {
		g.byPort[a.Port] = map[string]served{}
	}
	g.byPort[a.Port][k] = served{a, p}
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.byPort[a.Port], k)
		if len(g.byPort[a.Port]) == 0 {
			delete(g.byPort, a.Port)
		}
	}
}

// server returns the proxy of the group that serves the address up is connected to,
// or nil.
func (g *Group) server(up net.Conn) *Proxy {
	r, ok := up.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return nil
	}
	l, _ := up.LocalAddr().(*net.TCPAddr)
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, s := range g.byPort[r.Port] {
		a := s.addr
		if a.IP.Equal(r.IP) || a.IP.IsUnspecified() && (r.IP.IsLoopback() || l != nil && l.IP.Equal(r.IP)) {
			return s.proxy
		}
	}
	return nil
}

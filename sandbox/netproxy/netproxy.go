// Package netproxy is the sandbox's only way out: an HTTP proxy (CONNECT and
// absolute-form requests) that dials only hosts on an allowlist and answers any other
// with a 403 naming the host and a reported Violation. At level strict it serves on a
// listener on the sandbox's own loopback, which the worker makes and hands over.
package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Violation kinds.
const (
	// KindNetworkDenied is a connection to a host that is not on the allowlist, or to
	// the proxy itself.
	KindNetworkDenied = "network_denied"
	// KindBadRequest is a request the proxy cannot parse or does not serve.
	KindBadRequest = "bad_request"
)

// Violation is one request the proxy refused.
type Violation struct {
	Kind   string // KindNetworkDenied or KindBadRequest
	Target string // host:port asked for; "" when the request named none
	Detail string // why, for logs
}

// MaxHeaderBytes bounds a request's line and headers.
const MaxHeaderBytes = 64 << 10

// AllowKey is the setting named in refusals as the place to allow a host.
const AllowKey = "network.allow"

// Proxy is an allowlisting HTTP proxy. Create it with New; it may Serve several
// listeners at once.
type Proxy struct {
	allow       Allowlist
	onViolation func(Violation)
	dial        func(ctx context.Context, network, addr string) (net.Conn, error)

	mu    sync.Mutex
	addrs map[string]*net.TCPAddr // TCP addresses being served, for loop detection
}

// New returns a proxy that allows hosts on allow, reports refusals to onViolation
// (which may be nil; it is called from connection goroutines, concurrently) and dials
// upstream with dial (nil: a net.Dialer with a 10s timeout, resolving names here,
// since the sandbox has no DNS).
func New(allow Allowlist, onViolation func(Violation), dial func(ctx context.Context, network, addr string) (net.Conn, error)) *Proxy {
	if onViolation == nil {
		onViolation = func(Violation) {}
	}
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	return &Proxy{allow: allow, onViolation: onViolation, dial: dial, addrs: map[string]*net.TCPAddr{}}
}

// Serve serves proxy requests on l until ctx is done or l closes. It closes l and
// every connection it opened before it returns, waits for every goroutine it started,
// and returns nil unless accepting failed. A request for l's own address is refused:
// the proxy would dial itself.
func (p *Proxy) Serve(ctx context.Context, l net.Listener) error {
	if a, ok := l.Addr().(*net.TCPAddr); ok {
		k := a.String()
		p.mu.Lock()
		p.addrs[k] = a
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.addrs, k)
			p.mu.Unlock()
		}()
	}
	return serve(ctx, l, p.handle)
}

// ServeForeign is Serve for a listener in another network namespace than the one the
// proxy dials from (a sandbox's loopback, whose worker handed the listener over): its
// address there names something else here, which the allowlist may let a tool reach,
// so it is not one of the proxy's own.
func (p *Proxy) ServeForeign(ctx context.Context, l net.Listener) error {
	return serve(ctx, l, p.handle)
}

// handle serves one client connection: requests in turn until one fails, closes or
// becomes a tunnel.
func (p *Proxy) handle(ctx context.Context, t *tracker, c net.Conn) {
	lr := &headerLimit{r: c}
	br := bufio.NewReaderSize(lr, 4096)
	var up upstream
	defer up.close(t)
	for {
		lr.n = MaxHeaderBytes
		req, err := http.ReadRequest(br)
		if err != nil {
			var oe *net.OpError
			if errors.Is(err, io.EOF) || errors.As(err, &oe) {
				return // the client closed or broke the connection
			}
			if errors.Is(err, errHeaderTooLong) || lr.n == 0 {
				p.refuse(c, http.StatusRequestHeaderFieldsTooLarge, Violation{KindBadRequest, "", "request headers longer than " + strconv.Itoa(MaxHeaderBytes) + " bytes"})
				return
			}
			p.refuse(c, http.StatusBadRequest, Violation{KindBadRequest, "", "malformed request: " + err.Error()})
			return
		}
		lr.n = -1
		if req.Method == http.MethodConnect {
			p.connect(ctx, t, c, br, req)
			return
		}
		if !p.forward(ctx, t, c, req, &up) {
			return
		}
	}
}

// connect serves a CONNECT: check, dial, answer 200 and splice.
func (p *Proxy) connect(ctx context.Context, t *tracker, c net.Conn, br *bufio.Reader, req *http.Request) {
	target := req.RequestURI
	host, port, err := net.SplitHostPort(target)
	if err != nil || host == "" || !validPort(port) {
		p.refuse(c, http.StatusBadRequest, Violation{KindBadRequest, target, "CONNECT wants host:port"})
		return
	}
	up, ok := p.open(ctx, t, c, host, port)
	if !ok {
		return
	}
	defer t.remove(up)
	defer func() { _ = up.Close() }()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	var src io.Reader = c
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		src = io.MultiReader(bytes.NewReader(b), c)
	}
	splice(c, src, up)
}

// open checks host:port against the allowlist and the proxy's own addresses and dials
// it, answering the client itself when it cannot.
func (p *Proxy) open(ctx context.Context, t *tracker, c net.Conn, host, port string) (net.Conn, bool) {
	target := net.JoinHostPort(host, port)
	if !p.allow.Allows(host) {
		p.refuse(c, http.StatusForbidden, Violation{KindNetworkDenied, target, "host not in " + AllowKey})
		return nil, false
	}
	up, err := p.dial(ctx, "tcp", target)
	if err != nil {
		reply(c, http.StatusBadGateway, fmt.Sprintf("agentrun sandbox: connection to %s failed: %v\n", target, err))
		return nil, false
	}
	if p.isSelf(up) {
		_ = up.Close()
		p.refuse(c, http.StatusForbidden, Violation{KindNetworkDenied, target, "the proxy itself"})
		return nil, false
	}
	if !t.add(up) {
		return nil, false
	}
	return up, true
}

// isSelf reports whether up is connected to an address this proxy serves.
func (p *Proxy) isSelf(up net.Conn) bool {
	r, ok := up.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return false
	}
	l, _ := up.LocalAddr().(*net.TCPAddr)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.addrs {
		if a.Port != r.Port {
			continue
		}
		if a.IP.Equal(r.IP) || a.IP.IsUnspecified() && (r.IP.IsLoopback() || l != nil && l.IP.Equal(r.IP)) {
			return true
		}
	}
	return false
}

// refuse reports v and answers the client with a plain-text error naming the target.
func (p *Proxy) refuse(c net.Conn, status int, v Violation) {
	p.onViolation(v)
	var msg string
	switch {
	case v.Kind == KindNetworkDenied && v.Detail == "the proxy itself":
		msg = fmt.Sprintf("agentrun sandbox: connection to %s refused: it is the sandbox's proxy\n", v.Target)
	case v.Kind == KindNetworkDenied:
		host, _, _ := net.SplitHostPort(v.Target)
		msg = fmt.Sprintf("agentrun sandbox: connection to %s refused: host not in %s (add %q to %s to allow it)\n", v.Target, AllowKey, host, AllowKey)
	case v.Target != "":
		msg = fmt.Sprintf("agentrun sandbox: bad proxy request for %s: %s\n", v.Target, v.Detail)
	default:
		msg = fmt.Sprintf("agentrun sandbox: bad proxy request: %s\n", v.Detail)
	}
	reply(c, status, msg)
}

// reply writes a complete response that closes the connection.
func reply(c net.Conn, status int, body string) {
	_, _ = fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}

func validPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n < 1<<16 && strconv.Itoa(n) == s
}

// headerLimit passes at most n bytes through, failing after; n < 0 means no limit.
type headerLimit struct {
	r io.Reader
	n int
}

var errHeaderTooLong = errors.New("request headers too long")

func (l *headerLimit) Read(b []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(b)
	}
	if l.n == 0 {
		return 0, errHeaderTooLong
	}
	if len(b) > l.n {
		b = b[:l.n]
	}
	n, err := l.r.Read(b)
	l.n -= n
	return n, err
}

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
	// the proxy itself or another of its group.
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
	group       *Group // the proxies whose listeners this one refuses to dial
}

// defaultDialTimeout bounds a dial upstream by the default dialer.
const defaultDialTimeout = 10 * time.Second

// DetailDirect is the detail of a tool's connection that did not go through the
// proxy, which the sandbox refused (level landlock, sandbox.ServeConnects).
const DetailDirect = "a direct connection, not through the proxy"

// Direct is the violation of a tool's connection to target (host:port, or an address
// family) that the sandbox refused because it did not go through the proxy.
func Direct(target string) Violation {
	return Violation{Kind: KindNetworkDenied, Target: target, Detail: DetailDirect}
}

// Detail of a refused connection to a listener of the proxy or of its group.
const (
	detailSelf  = "the proxy itself"
	detailGroup = "another session's proxy"
	// detailInternal starts the detail of a host at an internal address that the
	// allowlist does not name exactly.
	detailInternal = "an internal address"
)

// New returns a proxy of a group of its own (Group.New).
func New(allow Allowlist, onViolation func(Violation), dial func(ctx context.Context, network, addr string) (net.Conn, error)) *Proxy {
	return NewGroup().New(allow, onViolation, dial)
}

// Listen listens on addr (host:port of TCP) for the proxy and returns the listener to
// Serve. From the moment Listen returns until the listener closes, a request for its
// address from any proxy of the group is refused: the proxy would dial itself, or hand
// the tool another session's allowlist. A listener made elsewhere (a worker's, in its
// sandbox's own network namespace, where its address names something else) is served
// as well but is not one of the group's.
func (p *Proxy) Listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &owned{Listener: l, forget: sync.OnceFunc(p.group.add(l.Addr().(*net.TCPAddr), p))}, nil
}

// owned is a listener of the proxy's group, which leaves the group when it closes.
type owned struct {
	net.Listener
	forget func()
}

func (o *owned) Close() error {
	o.forget()
	return o.Listener.Close()
}

// Serve serves proxy requests on l until ctx is done or l closes. It closes l and
// every connection it opened before it returns, waits for every goroutine it started,
// and returns nil unless accepting failed.
func (p *Proxy) Serve(ctx context.Context, l net.Listener) error {
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

// open checks host:port against the allowlist and the group's addresses and dials it,
// answering the client itself when it cannot.
func (p *Proxy) open(ctx context.Context, t *tracker, c net.Conn, host, port string) (net.Conn, bool) {
	target := net.JoinHostPort(host, port)
	if !p.allow.Allows(host) {
		p.refuse(c, http.StatusForbidden, Violation{KindNetworkDenied, target, "host not in " + AllowKey})
		return nil, false
	}
	dctx := ctx
	if p.allow.Names(host) {
		dctx = withInternal(ctx)
	}
	up, err := p.dial(dctx, "tcp", target)
	var ie *internalError
	switch {
	case errors.As(err, &ie):
		p.onViolation(Violation{KindNetworkDenied, target, detailInternal + ": " + ie.Error()})
		reply(c, http.StatusForbidden, fmt.Sprintf("agentrun sandbox: connection to %s refused: it is %s (%s), which only a host that %s names exactly may reach (add %q to %s to allow it)\n",
			target, ie.why, ie.addr, AllowKey, host, AllowKey))
		return nil, false
	case err != nil:
		reply(c, http.StatusBadGateway, fmt.Sprintf("agentrun sandbox: connection to %s failed: %v\n", target, err))
		return nil, false
	}
	if s := p.group.server(up); s != nil {
		_ = up.Close()
		detail := detailGroup
		if s == p {
			detail = detailSelf
		}
		p.refuse(c, http.StatusForbidden, Violation{KindNetworkDenied, target, detail})
		return nil, false
	}
	if !t.add(up) {
		return nil, false
	}
	return up, true
}

// refuse reports v and answers the client with a plain-text error naming the target.
func (p *Proxy) refuse(c net.Conn, status int, v Violation) {
	p.onViolation(v)
	var msg string
	switch {
	case v.Kind == KindNetworkDenied && v.Detail == detailSelf:
		msg = fmt.Sprintf("agentrun sandbox: connection to %s refused: it is the sandbox's proxy\n", v.Target)
	case v.Kind == KindNetworkDenied && v.Detail == detailGroup:
		msg = fmt.Sprintf("agentrun sandbox: connection to %s refused: it is another session's sandbox proxy\n", v.Target)
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

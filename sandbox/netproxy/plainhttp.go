package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strings"
)

// upstream is the connection behind a client connection's plain HTTP requests, kept
// while the client keeps asking the same host:port.
type upstream struct {
	conn   net.Conn
	target string
	br     *bufio.Reader
	bw     *bufio.Writer
}

func (u *upstream) close(t *tracker) {
	if u.conn != nil {
		t.remove(u.conn)
		_ = u.conn.Close()
		*u = upstream{}
	}
}

// forward serves one absolute-form request (GET http://host/path) over up, reporting
// whether the client connection may carry another.
func (p *Proxy) forward(ctx context.Context, t *tracker, c net.Conn, req *http.Request, up *upstream) bool {
	if !req.URL.IsAbs() {
		p.refuse(c, http.StatusBadRequest, Violation{KindBadRequest, "", "not a proxy request: want GET http://host/path or CONNECT host:port"})
		return false
	}
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
	}
	target := net.JoinHostPort(host, port)
	if req.URL.Scheme != "http" {
		p.refuse(c, http.StatusBadRequest, Violation{KindBadRequest, target, fmt.Sprintf("scheme %q: only http URLs are proxied; https goes through CONNECT", req.URL.Scheme)})
		return false
	}
	if host == "" || !validPort(port) {
		p.refuse(c, http.StatusBadRequest, Violation{KindBadRequest, target, "URL wants a host and a port from 1 to 65535"})
		return false
	}
	out := outgoing(req)
	expect := strings.EqualFold(req.Header.Get("Expect"), "100-continue")
	var resp *http.Response
	for attempt := 0; ; attempt++ {
		reused := up.conn != nil && up.target == target
		if !reused {
			up.close(t)
			conn, ok := p.open(ctx, t, c, host, port)
			if !ok {
				return false
			}
			*up = upstream{conn: conn, target: target, br: bufio.NewReader(conn), bw: bufio.NewWriter(conn)}
		}
		if expect { // answered here, once the host has passed, as it is not forwarded
			expect = false
			if _, err := io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
				return false
			}
		}
		var err error
		resp, err = roundTrip(up, out)
		if err == nil {
			break
		}
		up.close(t)
		// A kept connection the server closed while idle: retry an idempotent request
		// without a body once, on a new connection.
		if reused && attempt == 0 && req.ContentLength == 0 && idempotent[req.Method] {
			continue
		}
		reply(c, http.StatusBadGateway, fmt.Sprintf("agentrun sandbox: request to %s failed: %v\n", target, err))
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	upClose := resp.Close
	removeHopByHop(resp.Header)
	resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.1", 1, 1
	// A body without a length or chunking ends when the connection does.
	resp.Close = req.Close || resp.ContentLength < 0 && len(resp.TransferEncoding) == 0
	err := resp.Write(c)
	if err != nil || upClose || resp.Close {
		up.close(t)
	}
	return err == nil && !resp.Close
}

// roundTrip writes out on up and reads its response, passing 1xx responses
// (other than 101, which the stripped Upgrade header rules out) to nobody.
func roundTrip(up *upstream, out *http.Request) (*http.Response, error) {
	if err := out.Write(up.bw); err != nil {
		return nil, err
	}
	if err := up.bw.Flush(); err != nil {
		return nil, err
	}
	for {
		resp, err := http.ReadResponse(up.br, out)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
		_ = resp.Body.Close()
	}
}

// outgoing is req as sent upstream: origin-form, Host from the URL, hop-by-hop
// headers removed and no User-Agent added.
func outgoing(req *http.Request) *http.Request {
	h := req.Header.Clone()
	removeHopByHop(h)
	h.Del("Expect")
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = []string{""} // Request.Write adds Go's own otherwise
	}
	u := *req.URL
	return &http.Request{
		Method:           req.Method,
		URL:              &u,
		Proto:            "HTTP/1.1",
		ProtoMajor:       1,
		ProtoMinor:       1,
		Header:           h,
		Body:             req.Body,
		ContentLength:    req.ContentLength,
		TransferEncoding: req.TransferEncoding,
		Host:             req.URL.Host,
		Trailer:          req.Trailer,
	}
}

var idempotent = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodOptions: true, http.MethodTrace: true}

// hopByHop are the headers that describe one connection, not the message.
var hopByHop = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func removeHopByHop(h http.Header) {
	for _, v := range h["Connection"] {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopByHop {
		h.Del(k)
	}
}

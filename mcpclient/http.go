package mcpclient

import (
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpClient reaches one streamable-HTTP server: from the runner, not through the
// sandbox's proxy (the spec names the server; the model does not), with the server's
// static headers on every request.
type httpClient struct {
	base    *http.Transport
	headers map[string]string
	client  *http.Client
	status  atomic.Int32 // the last 401 or 403 the server answered
}

func newHTTPClient(headers map[string]string) *httpClient {
	h := &httpClient{headers: headers, base: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		IdleConnTimeout:       30 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	}}
	h.client = &http.Client{Transport: h}
	return h
}

// RoundTrip adds the headers and remembers an authorization refusal.
func (h *httpClient) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range h.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := h.base.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		h.status.Store(int32(resp.StatusCode))
	}
	return resp, err
}

// unauthorized is the last 401 or 403 the server answered, 0 for none.
func (h *httpClient) unauthorized() int { return int(h.status.Load()) }

func (h *httpClient) transport(url string) mcp.Transport {
	return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: h.client, MaxRetries: 2}
}

// close drops the idle connections, and with them their goroutines.
func (h *httpClient) close() { h.base.CloseIdleConnections() }

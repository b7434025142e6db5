package netproxy

import (
	"bufio"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// upstreamHandler answers with the method, path, body and the headers a proxy must
// forward or drop, and counts its calls.
func upstreamHandler(calls *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		b, _ := io.ReadAll(r.Body)
		_, _ = fmt.Fprintf(w, "%s %s body=%q keep=%q hop=%q pauth=%q pconn=%q host=%s",
			r.Method, r.URL.Path, b, r.Header.Get("X-Keep"), r.Header.Get("X-Hop"),
			r.Header.Get("Proxy-Authorization"), r.Header.Get("Proxy-Connection"), r.Host)
	})
}

func TestHTTP(t *testing.T) {
	var calls atomic.Int32
	up := httptest.NewServer(upstreamHandler(&calls))
	t.Cleanup(up.Close)
	host := hostOf(t, up.URL)
	r := newRig(t, "127.0.0.1")

	t.Run("client", func(t *testing.T) {
		c := r.client(t, nil)
		for i := range 3 { // the same client connection, kept alive
			resp, err := c.Post(up.URL+fmt.Sprintf("/p%d", i), "text/plain", strings.NewReader("hi"))
			require.NoError(t, err)
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, resp.Body.Close())
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Contains(t, string(b), fmt.Sprintf(`POST /p%d body="hi"`, i))
		}
		resp, err := c.Head(up.URL + "/head")
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		resp, err = c.Get(up.URL + "/get")
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, resp.Body.Close())
		require.NoError(t, err)
		assert.Contains(t, string(b), `GET /get body=""`)
	})
	t.Run("hop-by-hop", func(t *testing.T) {
		status, body := raw(t, r.fwd, "GET http://"+host+"/hop HTTP/1.1\r\nHost: wrong.example\r\n"+
			"Proxy-Authorization: Basic eDp5\r\nProxy-Connection: keep-alive\r\nConnection: close, X-Hop\r\n"+
			"X-Hop: 1\r\nX-Keep: 2\r\n\r\n")
		assert.Equal(t, http.StatusOK, status)
		assert.Equal(t, fmt.Sprintf(`GET /hop body="" keep="2" hop="" pauth="" pconn="" host=%s`, host), body)
	})
	t.Run("chunked and expect", func(t *testing.T) {
		c, err := net.Dial("tcp", r.fwd)
		require.NoError(t, err)
		defer func() { _ = c.Close() }()
		_, err = io.WriteString(c, "POST http://"+host+"/chunked HTTP/1.1\r\nHost: "+host+"\r\n"+
			"Expect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n")
		require.NoError(t, err)
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "HTTP/1.1 100 Continue\r\n", line)
		line, err = br.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "\r\n", line)
		_, err = io.WriteString(c, "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, resp.Body.Close())
		require.NoError(t, err)
		assert.Contains(t, string(b), `POST /chunked body="abcde"`)
	})
	t.Run("origin form", func(t *testing.T) {
		status, body := raw(t, r.fwd, "GET /hop HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Contains(t, body, "not a proxy request")
	})
	assert.Equal(t, int32(7), calls.Load())
	assert.Equal(t, []Violation{{KindBadRequest, "", "not a proxy request: want GET http://host/path or CONNECT host:port"}}, r.violations())
}

func TestConnectTLS(t *testing.T) {
	var calls atomic.Int32
	up := httptest.NewTLSServer(upstreamHandler(&calls))
	t.Cleanup(up.Close)
	r := newRig(t, "127.0.0.1", "example.com")
	roots := up.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	c := r.client(t, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}})
	for _, path := range []string{"/a", "/b"} {
		resp, err := c.Get(up.URL + path)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, resp.Body.Close())
		require.NoError(t, err)
		assert.Contains(t, string(b), "GET "+path)
	}
	assert.Equal(t, int32(2), calls.Load())
	assert.Empty(t, r.violations())
}

func TestRefused(t *testing.T) {
	var calls atomic.Int32
	up := httptest.NewServer(upstreamHandler(&calls))
	t.Cleanup(up.Close)
	target := hostOf(t, up.URL)
	denied := Violation{KindNetworkDenied, target, "host not in network.allow"}
	msg := "agentrun sandbox: connection to " + target + " refused: host not in network.allow"

	t.Run("http", func(t *testing.T) {
		r := newRig(t, "example.com")
		resp, err := r.client(t, nil).Get(up.URL + "/x")
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, resp.Body.Close())
		require.NoError(t, err)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Contains(t, string(b), msg)
		assert.Contains(t, string(b), `add "127.0.0.1" to network.allow`)
		assert.Equal(t, []Violation{denied}, r.violations())
	})
	t.Run("connect", func(t *testing.T) {
		r := newRig(t, "example.com")
		status, body := raw(t, r.fwd, connectRequest(target))
		assert.Equal(t, http.StatusForbidden, status)
		assert.Contains(t, body, msg)
		assert.Equal(t, []Violation{denied}, r.violations())
	})
	t.Run("name", func(t *testing.T) {
		r := newRig(t, "example.com")
		status, body := raw(t, r.fwd, connectRequest("evil.example:443"))
		assert.Equal(t, http.StatusForbidden, status)
		assert.Equal(t, "agentrun sandbox: connection to evil.example:443 refused: host not in network.allow (add \"evil.example\" to network.allow to allow it)\n", body)
		assert.Equal(t, []Violation{{KindNetworkDenied, "evil.example:443", "host not in network.allow"}}, r.violations())
	})
	assert.Zero(t, calls.Load(), "no refused request reached the upstream")
}

func TestConnectClosedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	target := l.Addr().String()
	require.NoError(t, l.Close())
	r := newRig(t, "127.0.0.1")
	status, body := raw(t, r.fwd, connectRequest(target))
	assert.Equal(t, http.StatusBadGateway, status)
	assert.Contains(t, body, "agentrun sandbox: connection to "+target+" failed:")
	assert.Contains(t, body, "connection refused")
	assert.Empty(t, r.violations(), "an unreachable host is not a violation")
}

func TestBadRequests(t *testing.T) {
	for _, tc := range []struct {
		name, request string
		status        int
		violation     Violation // Detail: a part of it
	}{
		{"garbage", "\x16\x03\x01\x02\x00 hello\r\n\r\n", http.StatusBadRequest, Violation{KindBadRequest, "", "malformed request: "}},
		{"no port", "CONNECT example.com HTTP/1.1\r\n\r\n", http.StatusBadRequest, Violation{KindBadRequest, "example.com", "CONNECT wants host:port"}},
		{"bad port", "CONNECT example.com:0 HTTP/1.1\r\n\r\n", http.StatusBadRequest, Violation{KindBadRequest, "example.com:0", "CONNECT wants host:port"}},
		{"https url", "GET https://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", http.StatusBadRequest, Violation{KindBadRequest, "example.com:80", `scheme "https": only http URLs are proxied; https goes through CONNECT`}},
		{"huge headers", "GET http://example.com/ HTTP/1.1\r\nX: " + strings.Repeat("a", MaxHeaderBytes) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge, Violation{KindBadRequest, "", "request headers longer than 65536 bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "example.com")
			status, body := raw(t, r.fwd, tc.request)
			assert.Equal(t, tc.status, status)
			assert.Contains(t, body, "agentrun sandbox: bad proxy request")
			vs := r.violations()
			require.Len(t, vs, 1)
			assert.Equal(t, tc.violation.Kind, vs[0].Kind)
			assert.Equal(t, tc.violation.Target, vs[0].Target)
			assert.Contains(t, vs[0].Detail, tc.violation.Detail)
		})
	}
}

func TestCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	var calls atomic.Int32
	plain := httptest.NewServer(upstreamHandler(&calls))
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(upstreamHandler(&calls))
	t.Cleanup(secure.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw}), 0o600))
	r := newRig(t, "127.0.0.1")
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(t.Context(), curl, append([]string{"-sS", "--proxy", "http://" + r.fwd}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(plain.URL + "/plain")
	require.NoError(t, err, out)
	assert.Contains(t, out, "GET /plain")
	out, err = run("--cacert", ca, "-d", "x=1", secure.URL+"/tls")
	require.NoError(t, err, out)
	assert.Contains(t, out, `POST /tls body="x=1"`)
	out, err = run("http://evil.example/")
	require.NoError(t, err, out)
	assert.Contains(t, out, "agentrun sandbox: connection to evil.example:80 refused")
	out, err = run("https://evil.example/")
	assert.Error(t, err)
	assert.Contains(t, out, "403")
	assert.Equal(t, int32(2), calls.Load())
}

package netproxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkConnect is one sandboxed connection: dial the forwarder, CONNECT through
// it and the unix socket to an echo upstream, send and receive a line, close.
func BenchmarkConnect(b *testing.B) {
	r := newRig(b, "127.0.0.1")
	target := echo(b)
	req := connectRequest(target)
	buf := make([]byte, 5)
	b.ReportAllocs()
	for b.Loop() {
		c, err := net.Dial("tcp", r.fwd)
		require.NoError(b, err)
		_, err = io.WriteString(c, req)
		require.NoError(b, err)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		require.NoError(b, err)
		require.Equal(b, http.StatusOK, resp.StatusCode)
		require.NoError(b, resp.Body.Close(), "a 2xx CONNECT reply has no body: the tunnel stays open")
		_, err = io.WriteString(c, "ping\n")
		require.NoError(b, err)
		_, err = io.ReadFull(br, buf)
		require.NoError(b, err)
		require.NoError(b, c.Close())
	}
}

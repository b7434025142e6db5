package netproxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentrun/agentrun/sandbox/netproxy"
	"github.com/agentrun/agentrun/sandbox/relay"
)

// The runner serves the proxy on a unix socket; inside the sandbox the worker brings
// lo up (LoopbackUp) and forwards 127.0.0.1:PORT to that socket, and tools use
// http://127.0.0.1:PORT as their proxy.
func Example() {
	dir, _ := os.MkdirTemp("", "netproxy")
	defer func() { _ = os.RemoveAll(dir) }()
	sock := filepath.Join(dir, "proxy.sock")

	allow, _ := netproxy.ParseAllowlist([]string{".golang.org", "github.com"})
	p := netproxy.New(allow, func(v netproxy.Violation) { fmt.Println("violation:", v.Kind, v.Target) }, nil)
	ul, _ := net.Listen("unix", sock)
	tl, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Serve(ctx, ul) })
	wg.Go(func() {
		_ = relay.Forward(ctx, tl, func(ctx context.Context) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		})
	})
	defer wg.Wait()
	defer cancel()

	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: tl.Addr().String()})}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://evil.example/")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.Status, "\n", string(body))
	// Output:
	// violation: network_denied evil.example:80
	// 403 Forbidden
	// agentrun sandbox: connection to evil.example:80 refused: host not in network.allow (add "evil.example" to network.allow to allow it)
}

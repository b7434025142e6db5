package netproxy_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/agentrun/agentrun/sandbox/netproxy"
)

// The worker of a strict sandbox brings lo up (sandbox.LoopbackUp), listens on
// 127.0.0.1:PORT inside the sandbox's network namespace and hands the listener over;
// the runner serves the proxy on it, and tools use http://127.0.0.1:PORT as their
// proxy.
func Example() {
	allow, _ := netproxy.ParseAllowlist([]string{".golang.org", "github.com"})
	p := netproxy.New(allow, func(v netproxy.Violation) { fmt.Println("violation:", v.Kind, v.Target) }, nil)
	tl, _ := p.Listen("127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Serve(ctx, tl) })
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

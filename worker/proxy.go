package worker

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/agentrun/agentrun/sandbox"
)

// ProxyServer is the network proxy a sandbox's tools reach the network through.
type ProxyServer interface {
	// Listen listens on addr of the host's network for the proxy, which refuses to
	// dial the listener's address from then on.
	Listen(addr string) (net.Listener, error)
	// Serve serves l until ctx is done.
	Serve(ctx context.Context, l net.Listener) error
}

// proxyAddr is the address the network proxy has on a loopback, the sandbox's at level
// strict and the host's at landlock: the one place tools may connect to.
var proxyAddr = netip.AddrFrom4([4]byte{127, 0, 0, 1})

// ServeProxy makes p the network of cfg's sandbox (cfg.Spec, whose level is strict or
// landlock), serving it in goroutines of wg until ctx is done. At level strict it sets
// Spec.Proxied and returns the function to give Client.SetProxy, which serves each
// worker's listener on the sandbox's loopback; at level landlock it listens on a port
// of the host's loopback itself, sets ProxyPort and returns nil.
func ServeProxy(ctx context.Context, wg *sync.WaitGroup, p ProxyServer, cfg *Config) (func(net.Listener), error) {
	if cfg.Spec.Level == sandbox.LevelStrict {
		cfg.Spec.Proxied = true
		return func(l net.Listener) { wg.Go(func() { _ = p.Serve(ctx, l) }) }, nil
	}
	l, err := p.Listen(netip.AddrPortFrom(proxyAddr, 0).String())
	if err != nil {
		return nil, fmt.Errorf("worker: proxy: %w", err)
	}
	cfg.ProxyPort = l.Addr().(*net.TCPAddr).Port
	wg.Go(func() { _ = p.Serve(ctx, l) })
	return nil, nil
}

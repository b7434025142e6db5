package worker

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/sandbox/netproxy"
)

// confine applies every layer of cfg's level to this process (stage 2) and returns
// what took effect, and the environment additions for the network proxy: at level
// strict stage 1 bridges a loopback port (BridgePort) to the runner's proxy socket, at
// level landlock the proxy listens on a host loopback port (ProxyPort).
func confine(cfg Config) (Ready, []string, error) {
	s := cfg.Spec
	r := Ready{Level: s.Level, PID: os.Getpid()}
	var env []string
	// No tool opens a unix socket: a read-only bind does not stop connect(2) on a host
	// daemon's socket file, and Landlock before ABI 9 has no right for it.
	deny := []int{unix.AF_UNIX}
	switch {
	case s.Level == sandbox.LevelStrict:
		r.Layers = append(r.Layers, sandbox.LayerUserNS, sandbox.LayerMountNS, sandbox.LayerPIDNS,
			sandbox.LayerIPCNS, sandbox.LayerUTSNS, sandbox.LayerNetNS)
		if cfg.BridgePort > 0 {
			env = proxyEnv(cfg.BridgePort)
		}
	case cfg.ProxyPort > 0:
		env = proxyEnv(cfg.ProxyPort)
	case s.Level == sandbox.LevelLandlock:
		// No network namespace: Landlock closes TCP, and this closes UDP and the rest.
		deny = append(deny, unix.AF_INET, unix.AF_INET6)
	}
	if s.Level == sandbox.LevelOff {
		return r, env, nil
	}
	if err := sandbox.DefaultLimits.Apply(); err != nil {
		return r, nil, err
	}
	r.Layers = append(r.Layers, sandbox.LayerRlimits)
	if err := sandbox.SetNotDumpable(); err != nil {
		return r, nil, err
	}
	if s.Level == sandbox.LevelStrict || os.Getuid() == 0 {
		if err := sandbox.DropCapabilities(); err != nil {
			return r, nil, err
		}
		r.Layers = append(r.Layers, sandbox.LayerCapsDropped)
	}
	if err := sandbox.SetNoNewPrivs(); err != nil {
		return r, nil, err
	}
	r.Layers = append(r.Layers, sandbox.LayerNoNewPrivs)
	abi, err := sandbox.ApplyLandlock(s, s.Level == sandbox.LevelStrict, cfg.Hidden, cfg.ProxyPort)
	if err != nil {
		return r, nil, err
	}
	r.LandlockABI = abi
	r.Layers = append(r.Layers, sandbox.LayerLandlock)
	if err := sandbox.ApplySeccomp(deny...); err != nil {
		return r, nil, err
	}
	r.Layers = append(r.Layers, sandbox.LayerSeccomp)
	return r, env, nil
}

// startBridge brings the namespace's loopback up and relays connections made to a port
// on it to the runner's proxy socket, bound into the sandbox; it runs in stage 1, which
// no seccomp filter keeps from unix sockets. It returns the port; wg owns the relay,
// which ctx stops.
func startBridge(ctx context.Context, wg *sync.WaitGroup) (int, error) {
	if err := netproxy.LoopbackUp(); err != nil {
		return 0, fmt.Errorf("network bridge: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("network bridge: %w", err)
	}
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sandbox.ProxySocketPath)
	}
	wg.Go(func() { _ = netproxy.Forward(ctx, l, dial) })
	return l.Addr().(*net.TCPAddr).Port, nil
}

// proxyEnv points the usual variables at the proxy on a loopback port.
func proxyEnv(port int) []string {
	u := "http://127.0.0.1:" + strconv.Itoa(port)
	return []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "ALL_PROXY=" + u, "http_proxy=" + u,
		"https_proxy=" + u, "all_proxy=" + u, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"}
}

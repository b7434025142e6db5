package worker

import (
	"fmt"
	"net/netip"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/sandbox"
)

// confineThread applies every layer of cfg's level to the calling thread of stage 1,
// right before that thread becomes (or starts) stage 2, which inherits them all: the
// rlimits and non-dumpability (of the whole process), no capabilities, no_new_privs,
// the Landlock domain and the seccomp filter. Confining one thread and then exec'ing
// costs plain system calls, where confining a running Go process stops every one of
// its threads for each step. It locks the calling goroutine to its thread for good:
// the exec that makes this process stage 2 keeps only that thread. It returns the
// layers in force.
func confineThread(cfg Config) (Ready, error) {
	runtime.LockOSThread() // never unlocked: the thread is changed for good
	s := cfg.Spec
	r := Ready{Level: s.Level}
	if s.Level == sandbox.LevelStrict {
		r.Layers = append(r.Layers, sandbox.LayerUserNS, sandbox.LayerMountNS, sandbox.LayerPIDNS,
			sandbox.LayerIPCNS, sandbox.LayerUTSNS, sandbox.LayerNetNS)
	}
	if s.Level == sandbox.LevelOff {
		return r, nil
	}
	if err := sandbox.DefaultLimits.Apply(); err != nil {
		return r, err
	}
	r.Layers = append(r.Layers, sandbox.LayerRlimits)
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return r, fmt.Errorf("not dumpable: %w", err)
	}
	if s.Level == sandbox.LevelStrict || os.Getuid() == 0 {
		if err := sandbox.DropCapabilitiesThread(); err != nil {
			return r, err
		}
		r.Layers = append(r.Layers, sandbox.LayerCapsDropped)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return r, fmt.Errorf("no_new_privs: %w", err)
	}
	r.Layers = append(r.Layers, sandbox.LayerNoNewPrivs)
	exe, err := os.OpenFile("/proc/self/exe", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return r, fmt.Errorf("landlock: %w", err)
	}
	abi, err := sandbox.ApplyLandlockThread(s, s.Level == sandbox.LevelStrict, cfg.Hidden, cfg.ProxyPort, exe)
	_ = exe.Close()
	if err != nil {
		return r, err
	}
	r.LandlockABI = abi
	r.Layers = append(r.Layers, sandbox.LayerLandlock)
	signals, err := signalGuard(s.Level, abi)
	if err != nil {
		return r, err
	}
	connects, err := sandbox.ApplySeccompThread(allowedSockets(cfg), signals)
	if err != nil {
		return r, err
	}
	r.Layers = append(r.Layers, sandbox.LayerSeccomp)
	if connects != nil {
		// The runner answers the tools' connect(2) calls; nothing in the sandbox may
		// hold the listener, or a tool could answer its own.
		err := sendFD(int(connects.Fd()), handOffConnects)
		_, _ = connects.Close(), unix.Close(fdHandOff)
		if err != nil {
			return r, fmt.Errorf("network: hand over the connect listener: %w", err)
		}
	}
	return r, nil
}

// signalGuard is what the seccomp filter keeps the tools' signals from at level and
// Landlock ABI abi: at level landlock before the ABI that scopes signals, the worker's
// ancestors, the runner among them (/proc, which Landlock leaves readable, shows them);
// elsewhere nothing, since the pid namespace (strict) or the scope keeps every signal
// in.
func signalGuard(level sandbox.Level, abi int) (sandbox.Signals, error) {
	if level != sandbox.LevelLandlock || abi >= sandbox.LandlockScopeABI {
		return sandbox.Signals{}, nil
	}
	return sandbox.AncestorSignals()
}

// allowedSockets are the sockets tools get: netlink's (the C library asks the kernel
// for the interfaces with it), and IPv4 and IPv6 ones. At level strict those are any,
// in a network namespace whose only way out is the proxy. At level landlock, the host's
// network, netlink is NETLINK_ROUTE alone, and IPv4 and IPv6 are TCP alone, which
// Landlock keeps to the proxy's port: UDP, ICMP ping and Multipath TCP sockets would go
// around it (a datagram to any host, a connection to any port); with no network, none.
// And since Landlock's rule names a port on any host, the runner makes each connect(2)
// itself (sandbox.ServeConnects), to the proxy's address alone; and listen(2), which
// binds without bind(2), is refused. No unix socket ever: a read-only bind does not
// stop connect(2) on a host daemon's socket file, and Landlock before ABI 9 has no right
// for it. Nor any other family: vsock, which no network namespace confines, reaches a
// VM's host, and the rest are attack surface no tool needs.
func allowedSockets(cfg Config) sandbox.Sockets {
	if cfg.Spec.Level != sandbox.LevelLandlock {
		return sandbox.Sockets{Any: []int{unix.AF_NETLINK, unix.AF_INET, unix.AF_INET6}}
	}
	// The host's network namespace: NETLINK_ROUTE alone, the C library's; another
	// protocol reaches more than the kernel (NETLINK_USERSOCK a host daemon's).
	s := sandbox.Sockets{Netlink: []int{unix.NETLINK_ROUTE}}
	if cfg.ProxyPort > 0 {
		s.TCP = []int{unix.AF_INET, unix.AF_INET6}
		s.Connect = true // Landlock's rule names the proxy's port, on any host
		s.NoListen = true
	}
	return s
}

// proxyEnvOf is the tools' environment additions for the network proxy: at level
// strict it accepts on a port of the sandbox's loopback (LoopbackPort), at level
// landlock on a port of the host's (ProxyPort).
func proxyEnvOf(cfg Config) []string {
	switch {
	case cfg.LoopbackPort > 0:
		return proxyEnv(cfg.LoopbackPort)
	case cfg.ProxyPort > 0:
		return proxyEnv(cfg.ProxyPort)
	}
	return nil
}

// handOverLoopback brings the sandbox's loopback up, listens on a port of it and sends
// the listener to the runner on fdHandOff, closing both: the runner's proxy, outside
// the sandbox, then accepts the tools' connections there itself, and nothing of the
// worker has to stay outside its confinement to carry them. It returns the port.
func handOverLoopback() (int, error) {
	defer func() { _ = unix.Close(fdHandOff) }()
	if err := sandbox.LoopbackUp(); err != nil {
		return 0, fmt.Errorf("network: %w", err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("network: listen: %w", err)
	}
	defer func() { _ = unix.Close(fd) }()
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: proxyAddr.As4()}); err != nil {
		return 0, fmt.Errorf("network: listen: %w", err)
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		return 0, fmt.Errorf("network: listen: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, fmt.Errorf("network: listen: %w", err)
	}
	if err := sendFD(fd, handOffListener); err != nil {
		return 0, fmt.Errorf("network: hand over the listener: %w", err)
	}
	return sa.(*unix.SockaddrInet4).Port, nil
}

// proxyEnv points the usual variables at the proxy on a loopback port.
func proxyEnv(port int) []string {
	u := "http://" + netip.AddrPortFrom(proxyAddr, uint16(port)).String()
	return []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "ALL_PROXY=" + u, "http_proxy=" + u,
		"https_proxy=" + u, "all_proxy=" + u, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"}
}

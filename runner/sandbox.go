package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/pathname"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/sandbox/netproxy"
	"github.com/agentrun/agentrun/worker"
)

// SandboxOptions configure the sessions' workers.
type SandboxOptions struct {
	// Binary is the executable that runs a worker when started with worker.Command:
	// agentrun-worker, or agentrun itself [worker.Executable()].
	Binary string
	// Report is what this machine allows [sandbox.Probe(), once per run].
	Report *sandbox.Report
	// Hidden are more host paths no tool may see (the runner's own state).
	Hidden []string
	// IdleExit is how long a worker with no process left waits for the next call
	// before it exits [2s].
	IdleExit time.Duration
	// TempDir is the folder where the tools' temporary folders go at level landlock
	// [os.TempDir()].
	TempDir string
}

// binary is the worker's executable: Binary, or worker.Executable.
func (o SandboxOptions) binary() (string, error) {
	if o.Binary != "" {
		return o.Binary, nil
	}
	return worker.Executable()
}

// ErrSandbox is wrapped by the error of a run whose sessions need a sandbox level this
// machine cannot give: nothing runs (exit 2), never a silent downgrade.
var ErrSandbox = errors.New("sandbox unavailable")

// levelFor is the level a session runs at: the spec's, or the best the machine has.
func levelFor(s jobs.Session, rep sandbox.Report) sandbox.Level {
	if l := s.Settings.Sandbox.Level; l != "" {
		return sandbox.Level(l)
	}
	return rep.Best()
}

// checkSandbox makes sure every session can get its level.
func (r *Runner) checkSandbox(sessions []jobs.Session) error {
	rep := r.sandboxReport()
	var missing []string
	seen := map[sandbox.Level]bool{}
	type need struct {
		l       sandbox.Level
		network bool
	}
	checked := map[need]bool{}
	for _, s := range sessions {
		l := levelFor(s, rep)
		seen[l] = true
		n := need{l, networkOpen(s.Settings.BashMode)}
		if checked[n] {
			continue
		}
		checked[n] = true
		if err := levelError(sandbox.Level(s.Settings.Sandbox.Level), l, n.network, rep); err != nil {
			missing = append(missing, fmt.Sprintf("session %s: %v", s.Key, err))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s (run 'agentrun sandbox check'; set sandbox.level to a level this machine has, or off)",
			ErrSandbox, strings.Join(missing, "; "))
	}
	if len(seen) > 1 || !seen[sandbox.LevelOff] {
		// A run killed with SIGKILL before this one could not remove its sessions'
		// cgroups; this run's go next to them.
		if n, err := sandbox.RemoveStaleCgroups(); err != nil {
			r.log.Warn("remove stale session cgroups", zapErr(err))
		} else if n > 0 {
			r.log.Info("removed the session cgroups of runs that were killed", zap.Int("cgroups", n))
		}
	}
	return nil
}

// levelError says why a session cannot run at level l (want is what its spec asked
// for, "" for the best; network says its bash_mode opens the network): the machine
// lacks it, the best is no confinement at all, which only an explicit off may choose,
// or the level cannot keep the network to the proxy here.
func levelError(want, l sandbox.Level, network bool, rep sandbox.Report) error {
	if want == "" && l == sandbox.LevelOff {
		return fmt.Errorf("this machine cannot confine tools (%w); write sandbox: {level: \"off\"} to run them unconfined",
			rep.Supports(sandbox.LevelLandlock))
	}
	if err := rep.Supports(l); err != nil {
		return err
	}
	if !network {
		return nil
	}
	if err := rep.SupportsNetwork(l); err != nil {
		return fmt.Errorf("%w; bash_mode's network digit 0 closes the network instead", err)
	}
	return nil
}

// networkOpen says whether bash_mode gives tools the network; a mode that does not
// parse gives them nothing.
func networkOpen(bashMode string) bool {
	m, err := sandbox.ParseMode(bashMode)
	return err == nil && m.Network != 0
}

func (r *Runner) sandboxReport() sandbox.Report {
	r.probeOnce.Do(func() {
		if r.opts.Sandbox.Report != nil {
			r.probe = *r.opts.Sandbox.Report
		} else {
			r.probe = sandbox.Probe()
		}
	})
	return r.probe
}

// sandboxRequest describes the sandbox of one session.
type sandboxRequest struct {
	// Level is the level to run at; "" means the best the machine has.
	Level    sandbox.Level
	BashMode string
	// Workspace is the session's working directory; Home the user's home, against
	// which ~ in Writable and Readable expands; AccountHome the home of the account
	// the runner runs as (Options.AccountHome).
	Workspace, Home, AccountHome string
	Writable, Readable           []string
	// Caches are the spec's caches, and CacheRoot the folder of the layers the tools
	// write over them at level strict ("": the system's temporary folder).
	Caches    []string
	CacheRoot string
	// Allow lists the hosts the network proxy lets through; empty allows any.
	Allow []string
	// Env is the complete environment of the tools.
	Env         []string
	ToolTimeout time.Duration
	// Hidden are more host paths no tool may see.
	Hidden []string
	// Scratch is the size in bytes of the scratch space (level strict); 0 is the
	// default.
	Scratch uint64
	// Memory is the memory limit in bytes of the session's tools; 0 is the default.
	Memory uint64
	// RootOnly are the host's paths that nobody but root may read (sandbox.RootOnly),
	// and Checkout the files of the workspace's checkout and the user's git configs
	// that hold credentials for a forge (checkoutCreds, scanUser): hidden from the tools
	// unless the system read bit is set.
	RootOnly, Checkout []string
	// CheckoutRefused, when set, says why a confined session cannot work in its
	// workspace: its tools would read the checkout's credentials there.
	CheckoutRefused error
	// TempRoot, when set, gives the run's folder for the sessions' TMPDIRs (level
	// landlock), made on first use; without it a TMPDIR goes in SandboxOptions.TempDir.
	TempRoot func() (string, error)
	// Out is the run's output folder (empty in RunSession), hidden as a whole where
	// the tools may write the folder that holds it (see newSandbox).
	Out string
}

// Sandbox is one session attempt's worker and, when its network is open, the proxy
// its tools reach the network through.
type Sandbox struct {
	client  *worker.Client
	level   sandbox.Level
	tempDir string // level landlock: the tools' TMPDIR, removed at close
	// cacheDir holds the layers the tools wrote over the caches (level strict),
	// removed at close.
	cacheDir string
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// Client is the session's worker client, which runs its tool calls and checks.
func (sb *Sandbox) Client() *worker.Client { return sb.client }

// newSandbox prepares a session's sandbox; the worker process itself starts at the
// first tool call or check. Its proxy is one of proxies, the run's, which refuse each
// other; onViolation hears of refused connections.
func newSandbox(req sandboxRequest, opts SandboxOptions, rep sandbox.Report, proxies *netproxy.Group, activity func(), onViolation func(netproxy.Violation), setupFailed func(error)) (*Sandbox, error) {
	level := req.Level
	if level == "" {
		level = rep.Best()
	}
	if err := levelError(req.Level, level, networkOpen(req.BashMode), rep); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSandbox, err)
	}
	mode, err := sandbox.ParseMode(req.BashMode)
	if err != nil {
		mode = sandbox.Mode{} // the policy denies everything; so does the kernel
	}
	if level != sandbox.LevelOff && req.CheckoutRefused != nil && !mode.System.Has(sandbox.PermRead) {
		return nil, req.CheckoutRefused // the system read bit shows the credentials
	}
	real, err := filepath.EvalSymlinks(req.Workspace)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	// The home the tools see ($HOME in their environment) is the one ~ means and the
	// one whose credential stores are hidden.
	home := req.Home
	for _, kv := range req.Env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok && filepath.IsAbs(v) {
			home = v
		}
	}
	spec := sandbox.Spec{Level: level, Mode: mode, Workspace: real, Home: home, AccountHome: req.AccountHome,
		Writable: expandHome(req.Writable, home), Readable: expandHome(req.Readable, home), Scratch: req.Scratch,
		Memory: req.Memory, RootOnly: req.RootOnly, Credentials: req.Checkout, Caches: expandHome(req.Caches, home)}
	for _, w := range slices.Concat(spec.Writable, spec.Caches) {
		// A folder the spec wants writable exists, so that the sandbox can bind it
		// (a build cache on a fresh machine).
		if err := os.MkdirAll(w, 0o755); err != nil {
			return nil, fmt.Errorf("sandbox: writable %s: %w", w, err)
		}
	}
	binary, err := opts.binary()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	own := append(slices.Clone(req.Hidden), opts.Hidden...) // the runner's state
	exe := absOr(binary)
	// Every worker starts from exe: a root-only folder that holds it stays.
	spec.RootOnly = slices.DeleteFunc(slices.Clone(spec.RootOnly), func(p string) bool { return pathname.Within(p, exe) })
	if spec.Writes(exe) {
		// Every worker starts from this file unconfined and confines itself: a tool
		// that replaced it would run its code outside the sandbox at the next start.
		// Hidden, it is a mount the tools cannot remove or write (level strict).
		own = append(own, exe)
	}
	if req.Out != "" && spec.Writes(req.Out) {
		// A folder the tools may write holds the output folder (a shared workspace, a
		// writable path): they could move the folder, or one on its way, and leave a
		// link to another in its place, and the runner would write its reports there.
		// Hidden, the folder is a mount they cannot move, and those on its way are
		// pinned (level strict; level landlock refuses, below).
		own = append(own, req.Out)
	}
	tempParent := opts.TempDir
	if level == sandbox.LevelLandlock && req.TempRoot != nil {
		// The session's TMPDIR goes in a folder of the run's, whose other folders are
		// the other sessions' TMPDIRs: hidden, but for the session's own, which its
		// rule of its own grants. Where the tools may write the folder that holds it,
		// Landlock cannot hide it, and they could write the rest of it too.
		if tempParent, err = req.TempRoot(); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		if _, _, in := spec.HiddenInWritable([]string{tempParent}); !in {
			own = append(own, tempParent)
		}
	}
	var cacheDir string
	if level == sandbox.LevelStrict && len(spec.Caches) > 0 {
		if cacheDir, err = makeLayers(req.CacheRoot); err != nil {
			return nil, fmt.Errorf("sandbox: caches: %w", err)
		}
		spec.CacheDir = cacheDir
		own = append(own, cacheDir)
	}
	hidden := spec.Hidden(own...)
	if level == sandbox.LevelLandlock {
		if h, folder, ok := spec.HiddenInWritable(hidden); ok {
			fix := "work in a folder that does not hold it, or give bash_mode the system read bit, which shows it"
			switch {
			case pathname.Real(h) == pathname.Real(exe): // exe, by whichever name
				fix = "install agentrun (its worker's executable) outside the folders the tools may write"
			case slices.Contains(own, h):
				fix = "put it outside (the run's output folder: --out outside the workspace)"
			}
			return nil, fmt.Errorf("%w: level landlock cannot hide %s inside %s, which the tools may write: "+
				"%s, or run at level strict (Landlock grants by folder: hiding it would take %s itself from the tools)",
				ErrSandbox, h, folder, fix, folder)
		}
	}
	sb := &Sandbox{level: level, cacheDir: cacheDir}
	env := slices.Clone(req.Env)
	ctx, cancel := context.WithCancel(context.Background())
	sb.cancel = cancel
	cfg := worker.Config{BashMode: req.BashMode, Timeout: req.ToolTimeout, IdleExit: opts.IdleExit}
	if cfg.IdleExit <= 0 {
		cfg.IdleExit = 2 * time.Second
	}
	if level == sandbox.LevelLandlock {
		if sb.tempDir, err = os.MkdirTemp(tempParent, "agentrun-tmp-"); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		spec.TempDir = sb.tempDir
		env = append(env, "TMPDIR="+sb.tempDir)
	}
	cfg.Spec, cfg.Env = spec, env
	cfg.Hidden = hidden
	var serveOnLoopback func(net.Listener) // level strict: the proxy, on each worker's loopback listener
	if mode.Network != 0 && level != sandbox.LevelOff {
		allow, err := netproxy.ParseAllowlist(req.Allow)
		if err != nil {
			_ = sb.Close()
			return nil, fmt.Errorf("sandbox: network.allow: %w", err)
		}
		if serveOnLoopback, err = worker.ServeProxy(ctx, &sb.wg, proxies.New(allow, onViolation, nil), &cfg); err != nil {
			_ = sb.Close()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	sb.client = worker.New(cfg, binary, activity)
	if serveOnLoopback != nil {
		sb.client.SetProxy(serveOnLoopback)
	}
	if setupFailed != nil {
		sb.client.SetSetupFailed(setupFailed)
	}
	if cfg.ProxyPort > 0 && onViolation != nil {
		sb.client.SetRefusedConnect(func(target string) { onViolation(netproxy.Direct(target)) })
	}
	return sb, nil
}

// openSandbox prepares the sandbox of a session attempt of the run; setupFailed hears
// why its worker could not set the sandbox up, if it cannot.
func (st *runState) openSandbox(s jobs.Session, ws *workspace, activity func(), onViolation func(netproxy.Violation), setupFailed func(error)) (*Sandbox, error) {
	o := st.r.opts
	// The sessions' folder exists before any tool runs, so that it is hidden from the
	// first (Landlock hides what exists).
	if err := os.MkdirAll(st.sessionsDir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	hidden := []string{st.sessionsDir}
	if st.outDir != "" {
		// The other sessions' copies and worktrees: in a batch evaluation the tools
		// would find the other attempts' work there. The session's own workspace,
		// bound below, stays.
		hidden = append(hidden, filepath.Join(st.outDir, WorkspacesDir))
	}
	if o.InstructionHome != "" {
		hidden = append(hidden, absOr(o.InstructionHome))
	}
	hidden = append(hidden, st.ciState()...)
	// The git folders in the writable paths are guarded as a shared workspace's.
	writable := expandHome(s.Settings.Sandbox.Writable, o.Home)
	cacheRoot := ""
	if st.outDir != "" {
		cacheRoot = filepath.Join(st.outDir, WorkspacesDir, cachesDir) // hidden with the workspaces
	}
	for _, w := range writable {
		real, err := filepath.EvalSymlinks(w)
		if err != nil {
			continue // not there: no git folder of the user's
		}
		guard, err := st.sharedGuard(real, func() []string { return nestedWorkTrees(real, st.outDir) })
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		ws.guards = append(ws.guards, guard)
	}
	user, err := st.userGit()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	req := sandboxRequest{Level: sandbox.Level(s.Settings.Sandbox.Level), BashMode: s.Settings.BashMode,
		Workspace: ws.dir, Checkout: slices.Concat(ws.credentials, user.hide), CheckoutRefused: ws.credsRefused, Home: o.Home, AccountHome: o.AccountHome, Writable: slices.Concat(s.Settings.Sandbox.Writable, ws.writable), Caches: s.Settings.Sandbox.Caches, CacheRoot: cacheRoot, Readable: slices.Concat(s.Settings.Sandbox.Readable, user.readable, readableOutside(ws.readable, writable)),
		Allow: s.Settings.Network.Allow, Env: toolEnv(o.Environ, user.env, s.Settings.Env), ToolTimeout: s.Settings.ToolTimeout,
		Hidden: hidden, Out: st.outDir, TempRoot: st.tempRoot, RootOnly: st.rootOnly(), Scratch: uint64(s.Settings.Sandbox.ScratchMiB) << 20,
		Memory: uint64(s.Settings.Sandbox.MemoryMiB) << 20}
	sb, err := newSandbox(req, o.Sandbox, st.r.sandboxReport(), st.r.proxies, activity, onViolation, setupFailed)
	if err == nil && st.spawner != nil {
		sb.client.SetSpawner(st.spawner)
	}
	if err == nil && o.Telemetry != nil {
		// Every tool process and check gets the trace context of its span.
		sb.client.SetRequestEnv(o.Telemetry.ProcessEnv)
	}
	return sb, err
}

// Planned is the sandbox record of session_start: the level and the layers it puts in
// force once the worker starts.
func (sb *Sandbox) Planned() *protocol.Sandbox {
	return &protocol.Sandbox{Level: string(sb.level), Layers: layerNames(sb.level.Layers(os.Getuid() == 0))}
}

// Info is the sandbox record of result.json: the layers the worker reported, none
// when no tool ever ran.
func (sb *Sandbox) Info() *protocol.Sandbox {
	if sb == nil {
		return nil
	}
	out := &protocol.Sandbox{Level: string(sb.level), Layers: []string{}}
	if sb.client == nil {
		return out
	}
	if r := sb.client.Ready(); r != nil {
		for _, l := range r.Layers {
			out.Layers = append(out.Layers, string(l))
		}
	}
	return out
}

// EndTools ends the worker and with it every process the session's tools left running
// (a server started with &, or one that set out to tamper with what comes next); the
// next request starts a new worker.
func (sb *Sandbox) EndTools() error {
	return sb.client.Close()
}

// Close ends the worker (and every process of the session) and the proxy.
func (sb *Sandbox) Close() error {
	if sb == nil {
		return nil
	}
	var err error
	if sb.client != nil {
		err = sb.client.Close()
	}
	if sb.cancel != nil {
		sb.cancel()
	}
	sb.wg.Wait()
	if sb.tempDir != "" {
		_ = os.RemoveAll(sb.tempDir)
	}
	if sb.cacheDir != "" {
		removeLayers(sb.cacheDir)
	}
	return err
}

// toolEnv is the environment of a session's tools, built from nothing: PATH, HOME,
// LANG and TERM from the runner's environment, the reaper's tag, then the variables of
// ours (userGit's), and the variables the job declares.
func toolEnv(base, ours []string, declared map[string]string) []string {
	keep := map[string]bool{"PATH": true, "HOME": true, "LANG": true, "TERM": true, "AGENTRUN_PROCESS_TAG": true}
	// Never nil (an empty environment, not the runner's): pickEnv's result is not.
	return procEnv(append(pickEnv(base, func(name string) bool { return keep[name] }), ours...), declared)
}

// pickEnv is the part of environment base whose variables keep names.
func pickEnv(base []string, keep func(name string) bool) []string {
	picked := []string{}
	for _, kv := range base {
		if name, _, _ := strings.Cut(kv, "="); keep(name) {
			picked = append(picked, kv)
		}
	}
	return picked
}

// expandHome makes ~ and ~/x absolute against home (the user's home directory when
// home is empty).
func expandHome(paths []string, home string) []string {
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		switch {
		case p == "~":
			p = home
		case strings.HasPrefix(p, "~/"):
			p = filepath.Join(home, p[2:])
		}
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func layerNames(ls []sandbox.Layer) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l)
	}
	return out
}

// violation records a refused connection in the session's events.
func (st *runState) violation(arts *artifacts, s jobs.Session, v netproxy.Violation) {
	// A host the tools named may hold a secret of the session's: masked, as in the streams.
	st.r.log.Warn("sandbox refused a connection", zapKey(s.Key), zap.String("kind", v.Kind), zap.String("target", arts.redactor.String(v.Target)))
	if err := writeViolation(arts, v); err != nil {
		st.r.log.Warn("write sandbox_violation", zapKey(s.Key), zapErr(err))
	}
}

// writeViolation writes a refused connection as a sandbox_violation event to a
// session's sink, which must be safe for use from the proxy's goroutines.
func writeViolation(s agent.Sink, v netproxy.Violation) error {
	return s.Write(protocol.Message{Kind: protocol.KindSandboxViolation,
		Violation: &protocol.Violation{Kind: v.Kind, Target: v.Target}})
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/sandbox/netproxy"
	"github.com/agentrun/agentrun/worker"
)

// SandboxOptions configure the sessions' workers.
type SandboxOptions struct {
	// Binary is the agentrun executable, which runs a worker when started with
	// worker.Command [os.Executable()].
	Binary string
	// Report is what this machine allows [sandbox.Probe(), once per run].
	Report *sandbox.Report
	// Hidden are more host paths no tool may see (the runner's own state).
	Hidden []string
	// IdleExit is how long a worker with no process left waits for the next call
	// before it exits [2s].
	IdleExit time.Duration
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
	for _, s := range sessions {
		l := levelFor(s, rep)
		if seen[l] {
			continue
		}
		seen[l] = true
		if err := rep.Supports(l); err != nil {
			missing = append(missing, fmt.Sprintf("session %s: %v", s.Key, err))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s (run 'agentrun sandbox check'; set sandbox.level to a level this machine has, or off)",
			ErrSandbox, strings.Join(missing, "; "))
	}
	return nil
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

// sessionSandbox is one session attempt's worker and, when its network is open, the
// proxy its tools reach the network through.
type sessionSandbox struct {
	client  *worker.Client
	level   sandbox.Level
	tempDir string
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// openSandbox prepares the worker of a session attempt; the worker process itself
// starts at the first tool call or check. onViolation hears of refused connections.
func (st *runState) openSandbox(s jobs.Session, workdir string, activity func(), onViolation func(netproxy.Violation)) (*sessionSandbox, error) {
	o := st.r.opts
	level := levelFor(s, st.r.sandboxReport())
	mode, err := sandbox.ParseMode(s.Settings.BashMode)
	if err != nil {
		mode = sandbox.Mode{} // the policy denies everything; so does the kernel
	}
	home := o.Home
	real, err := filepath.EvalSymlinks(workdir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	spec := sandbox.Spec{Level: level, Mode: mode, Workspace: real, Home: home,
		Writable: expandHome(s.Settings.Sandbox.Writable, home), Readable: expandHome(s.Settings.Sandbox.Readable, home)}
	sb := &sessionSandbox{level: level}
	env := toolEnv(o.Environ, s.Settings.Env)
	ctx, cancel := context.WithCancel(context.Background())
	sb.cancel = cancel
	cfg := worker.Config{BashMode: s.Settings.BashMode, Timeout: s.Settings.ToolTimeout, IdleExit: o.Sandbox.IdleExit}
	if cfg.IdleExit <= 0 {
		cfg.IdleExit = 2 * time.Second
	}
	if level == sandbox.LevelLandlock {
		if sb.tempDir, err = os.MkdirTemp("", "agentrun-tmp-"); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		spec.TempDir = sb.tempDir
		env = append(env, "TMPDIR="+sb.tempDir)
	}
	if mode.Network != 0 && level != sandbox.LevelOff {
		allow, err := netproxy.ParseAllowlist(s.Settings.Network.Allow)
		if err != nil {
			sb.close()
			return nil, fmt.Errorf("sandbox: network.allow: %w", err)
		}
		proxy := netproxy.New(allow, onViolation, nil)
		if level == sandbox.LevelStrict {
			if err := st.proxySocket(sb, ctx, proxy, &spec); err != nil {
				sb.close()
				return nil, err
			}
		} else {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				sb.close()
				return nil, fmt.Errorf("sandbox: proxy: %w", err)
			}
			cfg.ProxyPort = l.Addr().(*net.TCPAddr).Port
			sb.wg.Go(func() { _ = proxy.Serve(ctx, l) })
		}
	}
	hidden := []string{filepath.Join(absOr(o.Out), SessionsDir)}
	if o.InstructionHome != "" {
		hidden = append(hidden, absOr(o.InstructionHome))
	}
	cfg.Spec, cfg.Env = spec, env
	cfg.Hidden = spec.Hidden(append(hidden, o.Sandbox.Hidden...)...)
	binary := o.Sandbox.Binary
	if binary == "" {
		if binary, err = os.Executable(); err != nil {
			sb.close()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	sb.client = worker.New(cfg, binary, activity)
	return sb, nil
}

// proxySocket serves proxy on a unix socket that the worker's root binds.
func (st *runState) proxySocket(sb *sessionSandbox, ctx context.Context, proxy *netproxy.Proxy, spec *sandbox.Spec) error {
	dir, err := os.MkdirTemp("", "agentrun-net-")
	if err != nil {
		return fmt.Errorf("sandbox: proxy: %w", err)
	}
	sb.tempDirs(dir)
	path := filepath.Join(dir, "proxy.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("sandbox: proxy: %w", err)
	}
	spec.ProxySocket = path
	sb.wg.Go(func() { _ = proxy.Serve(ctx, l) })
	return nil
}

// tempDirs records one more folder to remove at close.
func (sb *sessionSandbox) tempDirs(dir string) {
	if sb.tempDir == "" {
		sb.tempDir = dir
		return
	}
	sb.tempDir += string(os.PathListSeparator) + dir
}

// info is the sandbox record of session_start and result.json: the layers the worker
// reported, or those its level would have, when no tool ever ran.
func (sb *sessionSandbox) info() *protocol.Sandbox {
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

// close ends the worker (and every process of the session) and the proxy.
func (sb *sessionSandbox) close(log ...*zap.Logger) {
	if sb == nil {
		return
	}
	if sb.client != nil {
		if err := sb.client.Close(); err != nil && len(log) > 0 {
			log[0].Warn("close worker", zap.Error(err))
		}
	}
	if sb.cancel != nil {
		sb.cancel()
	}
	sb.wg.Wait()
	for _, d := range filepath.SplitList(sb.tempDir) {
		_ = os.RemoveAll(d)
	}
}

// toolEnv is the environment of a session's tools, built from nothing: PATH, HOME,
// LANG and TERM from the runner's environment, the reaper's tag, and the variables the
// job declares.
func toolEnv(base []string, declared map[string]string) []string {
	keep := map[string]bool{"PATH": true, "HOME": true, "LANG": true, "TERM": true, "AGENTRUN_PROCESS_TAG": true}
	var picked []string
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if keep[name] {
			picked = append(picked, kv)
		}
	}
	env := procEnv(picked, declared)
	if env == nil {
		env = []string{}
	}
	return env
}

// expandHome makes ~ and ~/x absolute against home.
func expandHome(paths []string, home string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		switch {
		case p == "~":
			p = home
		case strings.HasPrefix(p, "~/"):
			p = filepath.Join(home, p[2:])
		}
		if p != "" {
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
	st.r.log.Warn("sandbox refused a connection", zapKey(s.Key), zap.String("kind", v.Kind), zap.String("target", v.Target))
	if err := arts.Write(protocol.Message{Kind: protocol.KindSandboxViolation,
		Violation: &protocol.Violation{Kind: v.Kind, Target: v.Target}}); err != nil {
		st.r.log.Warn("write sandbox_violation", zapKey(s.Key), zapErr(err))
	}
}

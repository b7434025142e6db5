package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sourcegraph/conc/panics"
	"go.uber.org/zap"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/mcpclient"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sandbox/netproxy"
	"github.com/agentrun/agentrun/sink"
)

// runSession runs s in its folder dir, with its whole-session retries, and returns its
// final result. A persistent folder (SessionOptions.Persistent) is kept as it is and
// gets one attempt: a retry would move its history aside.
func (st *runState) runSession(ctx context.Context, s jobs.Session, dir string) *protocol.Result {
	st.progress.started(s.Key, true)
	prepare := resetDir
	if st.one.Persistent {
		prepare = func(dir string) error { return os.MkdirAll(dir, 0o755) }
	}
	if err := prepare(dir); err != nil {
		return st.failedToStart(s, dir, 1, err)
	}
	for attempt := 1; ; attempt++ {
		res := st.attempt(ctx, s, dir, attempt)
		if attempt > s.Settings.Retries || st.one.Persistent || !retryable(res.Status, res.Error) || ctx.Err() != nil {
			return res
		}
		st.r.log.Info("session failed; retrying", zapKey(s.Key), zap.String("status", string(res.Status)),
			zap.Int("attempt", attempt))
		if err := keepAttempt(dir, attempt); err != nil {
			return res
		}
		st.progress.retrying(s.Key, attempt+1)
	}
}

// attempt runs s once. Whatever happens, the returned result has been written as the
// last event of the session's streams and atomically to result.json.
func (st *runState) attempt(ctx context.Context, s jobs.Session, dir string, attempt int) (res *protocol.Result) {
	o := st.r.opts
	start := o.Now()
	res = st.newResult(s, attempt)
	ctx, span := st.startSession(ctx, s, res)
	if span != nil {
		defer func() { span.End(agent.SpanEnd{Result: res}) }() // after finish below
	}
	files := st.filesFor(s)
	arts, err := st.openArtifacts(s, dir, res.SessionID, files)
	if err != nil {
		res.Status, res.IsError = protocol.StatusCrashed, true
		res.Error = &protocol.Error{Kind: protocol.ErrInternal, Message: "open artifacts: " + err.Error()}
		return st.finish(nil, files, dir, res, start)
	}
	defer func() { res = st.finish(arts, files, dir, res, start) }()

	// The causes name the limit that was hit; a session without a timeout has none.
	sctx := ctx
	if timeout := s.Settings.Timeout; timeout > 0 {
		var cancelTimeout context.CancelFunc
		sctx, cancelTimeout = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("%w after %s", ErrSessionTimeout, timeout))
		defer cancelTimeout()
	}
	sctx, cancel := context.WithCancelCause(sctx)
	defer cancel(nil)
	idle := s.Settings.IdleTimeout
	watch := newWatchdog(idle, o.Now, func() { cancel(fmt.Errorf("%w (%s)", errInactivity, idle)) })
	defer watch.stop()

	var out agent.Outcome
	var ws *workspace
	var sb *Sandbox
	var servers *mcpclient.Set
	var mcpDown *protocol.Error
	var setupErr error
	started := false
	defer func() {
		if err := sb.Close(); err != nil {
			st.r.log.Warn("close worker", zapKey(s.Key), zapErr(err))
		}
		res.Sandbox = sb.Info()
		st.restoreGit(arts, s, ws, res) // the session's tools have ended
	}()
	recovered := panics.Try(func() {
		ws, setupErr = st.prepareWorkspace(sctx, s)
		if setupErr != nil {
			return
		}
		sb, setupErr = st.openSandbox(s, ws, watch.touch, func(v netproxy.Violation) {
			st.violation(arts, s, v)
		}, cancel) // no tool can run: the session ends, error_sandbox
		if setupErr != nil {
			return
		}
		if servers, setupErr = st.openMCP(sctx, s, sb, watch.touch); setupErr != nil {
			return
		}
		defer func() {
			if err := servers.Close(); err != nil {
				st.r.log.Warn("close MCP servers", zapKey(s.Key), zapErr(err))
			}
		}()
		var sess *agent.Session
		// The counters are in result.json, and a run never resumes a session from its
		// folder: no stats.json. A persistent folder (exec's) is resumed, and its
		// counters carry on from stats.json.
		store := &agent.DirStore{Dir: dir, Files: files, NoStats: !st.one.Persistent}
		defer func() {
			if err := store.Close(); err != nil {
				st.r.log.Warn("close messages", zapKey(s.Key), zapErr(err))
			}
		}()
		sess, setupErr = st.newAgent(s, &res.Provenance, res.SessionID, ws.dir, store, arts, watch, sb, servers)
		if setupErr != nil {
			return
		}
		started = true
		if setupErr = sess.Start(); setupErr != nil {
			return
		}
		attachMCP(servers, arts)
		if mcpDown = requiredDown(servers); mcpDown != nil && sctx.Err() == nil {
			return // before the first model call
		}
		mcpDown = nil // a session cancelled while connecting ends as cancelled
		out = sess.Run(sctx, s.Prompt)
	})
	watch.stop()
	if !started {
		st.writeStart(arts, dir, s, res, start)
	}
	switch {
	case recovered != nil:
		res.Status = protocol.StatusCrashed
		res.Error = &protocol.Error{Kind: protocol.ErrPanic, Message: fmt.Sprintf("panic: %v", recovered.Value)}
		if started {
			res.TotalCostUSD = nil // what the session spent before it panicked is unknown
		}
		st.r.log.Error("session panicked", zapKey(s.Key), zap.String("stack", string(recovered.Stack)))
	case errors.Is(setupErr, ErrSandbox):
		res.Status = protocol.StatusSandbox
		res.Error = &protocol.Error{Kind: protocol.ErrSandbox, Message: setupErr.Error()}
	case sink.DiskFull(setupErr) && st.disk != nil:
		// A write of its artifacts (its session_start, its copy) found the output
		// folder's disk full: the run stops, and its cause names the disk.
		res.Status, res.Error = protocol.StatusCancelled, st.disk.cancelled()
	case setupErr != nil:
		res.Status = protocol.StatusCrashed
		res.Error = &protocol.Error{Kind: protocol.ErrInternal, Message: setupErr.Error()}
	case mcpDown != nil:
		res.Status, res.Error, res.Checks = protocol.StatusMCP, mcpDown, []protocol.Check{}
	default:
		r := ResultOf(sctx, out)
		res.Status, res.Error, res.StopReason, res.NumTurns = r.Status, r.Error, r.StopReason, r.NumTurns
		res.DurationAPIMS, res.Usage, res.TotalCostUSD, res.Result = r.DurationAPIMS, r.Usage, r.TotalCostUSD, r.Result
	}
	res.MCPServers = servers.Statuses()
	if res.Status == protocol.StatusSuccess && ws != nil && sb != nil && len(s.Checks) > 0 {
		// The checks judge what the session left in its workspace, beside nothing its
		// tools left running: a process of theirs could rewrite a file a check writes
		// (a hidden test) while the check runs.
		if err := sb.EndTools(); err != nil {
			st.r.log.Warn("end the session's tools before its checks", zapKey(s.Key), zapErr(err))
		}
		// And they judge it with the git folders as they were: through them the
		// session could make git lie to a check (an exclude that keeps a file it left
		// from git status, an fsmonitor hook that reports nothing changed).
		st.restoreGit(arts, s, ws, res)
		if res.Status == protocol.StatusSuccess {
			st.runChecks(ctx, s, sb, res)
		}
	}
	if res.Status == protocol.StatusSuccess && len(s.OutputSchema) > 0 {
		checkOutput(s, res)
	}
	if ws != nil {
		if err := ws.finish(dir, files); err != nil {
			st.r.log.Warn("workspace cleanup", zapKey(s.Key), zapErr(err))
		}
	}
	if res.Result == "" && res.Error != nil {
		res.Result = res.Error.Message
	}
	return res
}

// finish completes a result and writes it: as the last event, then to result.json. It
// returns the result with its secrets masked, which is what the summaries, the progress
// display and the logs may show.
func (st *runState) finish(arts *artifacts, files *sink.Files, dir string, res *protocol.Result, start time.Time) *protocol.Result {
	res.DurationMS = st.r.opts.Now().Sub(start).Milliseconds()
	res.IsError = res.Status != protocol.StatusSuccess
	if arts != nil {
		// The redactor scrubs the result before the streams see it.
		if err := arts.writeResult(res); err != nil {
			st.r.log.Error("write result event", zapKey(res.Key), zapErr(err))
		}
		if err := arts.close(); err != nil {
			st.r.log.Error("close artifacts", zapKey(res.Key), zapErr(err))
		}
		if err := st.runLog.Flush(); err != nil {
			st.r.log.Error("write run.log", zapKey(res.Key), zapErr(err))
		}
	}
	res = files.Redactor().RedactResult(res)
	// Atomic, not synced: the run syncs its folder once at its end (syncOut).
	if err := files.WriteJSONUnsynced(filepath.Join(dir, ResultFile), res); err != nil {
		st.r.log.Error("write result.json", zapKey(res.Key), zapErr(err))
	}
	st.r.log.Debug("session finished", zapKey(res.Key), zap.String("status", string(res.Status)),
		zap.Int("turns", res.NumTurns), zap.Int64("ms", res.DurationMS))
	return res
}

// noCost is the cost of a session that called no model: $0 whatever the prices.
func noCost() *float64 {
	c := 0.0
	return &c
}

// touch creates the file at path when it does not exist, leaving an existing one as it is.
func touch(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// newAgent builds the agent session of s.
// newAgent builds the session's agent; prov gets the resolved provider and model.
func (st *runState) newAgent(s jobs.Session, prov *protocol.Provenance, sessionID, workdir string, store agent.Store, arts *artifacts, watch *watchdog, sb *Sandbox, servers *mcpclient.Set) (*agent.Session, error) {
	o := st.r.opts
	provider, info, err := o.Providers.Provider(s, watch.liveness())
	if err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	prov.Provider, prov.Model = info.Name, info.Model
	tools := make([]string, len(s.Settings.Tools))
	for i, t := range s.Settings.Tools {
		tools[i] = string(t)
	}
	cfg := agent.Config{
		SessionID: sessionID, JobID: s.JobID, Provenance: *prov, Server: info.Server,
		MaxTurns: s.Settings.MaxTurns, MaxTokens: s.Settings.MaxTokens,
		Thinking: protocol.Thinking{Mode: string(s.Settings.Thinking.Mode), Budget: s.Settings.Thinking.Budget,
			Effort: string(s.Settings.Thinking.Effort)},
		System: s.System, Tools: tools, Workspace: workdir, Home: o.Home,
		BashMode: s.Settings.BashMode, ToolTimeout: s.Settings.ToolTimeout,
		ProcEnv:         procEnv(o.Environ, s.Settings.Env),
		InstructionHome: o.InstructionHome, Skills: s.Settings.Skills,
		Budget: agent.Budget{MaxCostUSD: s.Settings.Budget.MaxCostUSD, MaxTokens: s.Settings.Budget.MaxTokens},
		Limits: protocol.Limits{MaxResponseBytes: s.Settings.Limits.MaxResponseBytes,
			MaxToolInputBytes: s.Settings.Limits.MaxToolInputBytes},
		Compaction: compaction(o.Compaction, s.Settings.MaxContext),
		Sandbox:    sb.Planned(),
		MCPServers: servers.Statuses(),
	}
	deps := agent.Deps{
		Provider: watched{Provider: st.primer.wrap(provider, info, s), watch: watch}, Sink: arts, Store: store, Now: o.Now,
		NewID: o.NewID, Cost: st.costFor(info), Activity: watch.touch, Groups: o.Groups, SubAgentSlots: st.subAgents,
		Tools: sb.client, Servers: serverTools(servers),
	}
	if o.Telemetry != nil {
		deps.Observer = o.Telemetry
	}
	return agent.New(cfg, deps)
}

// provenance is what session_start and the result say produced s.
func (st *runState) provenance(s jobs.Session, info ProviderInfo, attempt int) protocol.Provenance {
	return protocol.Provenance{Provider: info.Name, Model: info.Model, Matrix: s.Matrix, Repeat: s.Repeat,
		Attempt: attempt, Version: st.r.opts.Version}
}

// costFor returns the pricing of a session's provider.
func (st *runState) costFor(info ProviderInfo) func(string, protocol.Usage) (float64, bool) {
	if info.Name != "scripted" {
		return st.cost
	}
	return func(model string, u protocol.Usage) (float64, bool) {
		return st.cost(pricedAs(st.spec, info.Name, model), u)
	}
}

// pricedAs names the model whose price the calls of model on provider cost. The
// built-in scripted model is free whatever model name it plays, unless the spec's own
// prices name that model (a keyless rehearsal of a budget).
func pricedAs(spec *jobs.Spec, provider, model string) string {
	if provider == "scripted" {
		if _, ok := jobs.LookupPrice(spec.Prices, model); !ok {
			return "scripted"
		}
	}
	return model
}

// cost prices one model call and charges it to the run's budget, cancelling the run
// once the cap is exceeded.
func (st *runState) cost(model string, u protocol.Usage) (float64, bool) {
	p, ok := st.price(model)
	if !ok {
		return 0, false
	}
	usd := p.Cost(u.Input, u.Output, u.CacheRead, u.CacheCreation)
	if st.budget.spend(usd) {
		st.cancelRun(errRunBudget)
	}
	return usd, true
}

// price looks up the price of model once per run: the spec's lookup builds the built-in
// table on every call.
func (st *runState) price(model string) (jobs.Price, bool) {
	st.pricesMu.Lock()
	defer st.pricesMu.Unlock()
	if p, ok := st.prices[model]; ok {
		return p.price, p.known
	}
	p, ok := st.spec.Price(model)
	if st.prices == nil {
		st.prices = map[string]knownPrice{}
	}
	st.prices[model] = knownPrice{price: p, known: ok}
	return p, ok
}

// knownPrice is a cached price lookup.
type knownPrice struct {
	price jobs.Price
	known bool
}

// secretsFor returns the values to redact in the artifacts of s.
func (st *runState) secretsFor(s jobs.Session) []string { return secretsFor(st.r.opts, s) }

// filesFor is the writer of session s's files: masking its secrets, and writing into
// the run's reserve when the disk is full.
func (st *runState) filesFor(s jobs.Session) *sink.Files {
	return sink.NewFiles(st.secretsFor(s)).OnFull(st.disk.Full)
}

func secretsFor(opts Options, s jobs.Session) []string {
	out := append([]string(nil), opts.Secrets...)
	for _, name := range s.Settings.Secrets {
		if v, ok := opts.LookupEnv(name); ok && v != "" {
			out = append(out, v)
		}
		if v := s.Settings.Env[name]; v != "" {
			out = append(out, v)
		}
	}
	return append(out, mcpSecrets(opts, s)...)
}

// procEnv is the environment of tool processes: the base environment with the job's
// variables on top.
func procEnv(base []string, extra map[string]string) []string {
	if base == nil && len(extra) == 0 {
		return nil
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := extra[name]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}

// resetDir empties a session folder for a fresh run.
func resetDir(dir string) error {
	if err := removeIfExists(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o755)
}

// removeIfExists removes path and what it holds. A fresh output folder has nothing to
// remove, and looking first saves the removal's system calls for every session.
func removeIfExists(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return os.RemoveAll(path)
}

// keepAttempt moves the artifacts of a failed attempt to attempts/N.
func keepAttempt(dir string, attempt int) error {
	dst := filepath.Join(dir, "attempts", fmt.Sprint(attempt))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == "attempts" {
			continue
		}
		if err := os.Rename(filepath.Join(dir, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func zapKey(k string) zap.Field  { return zap.String("session", k) }
func zapErr(err error) zap.Field { return zap.Error(err) }

// compaction is the run's compaction settings with the session's context budget.
func compaction(c agent.CompactConfig, maxContext int) agent.CompactConfig {
	if maxContext > 0 {
		c.MaxContext = int64(maxContext)
	}
	return c
}

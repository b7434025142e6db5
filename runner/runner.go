// Package runner runs the sessions of a job spec with bounded parallelism and writes
// one folder of artifacts per session plus the run's summaries; every session ends with
// exactly one result, whatever happens to it.
package runner

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"
	"go.uber.org/zap"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/pathname"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/sandbox/netproxy"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/worker"
)

// Providers makes the model provider of each session attempt. The provider's transport
// bounds the silence of one request by live.Idle and calls live.Activity whenever bytes
// arrive from the model, so the session's inactivity watchdog sees it is alive.
type Providers interface {
	Provider(s jobs.Session, live Liveness) (agent.Provider, ProviderInfo, error)
}

// ProviderInfo names what a session talks to, for its session_start event; Server is
// the provider's host and port, empty for an in-process model.
type ProviderInfo struct {
	Name   string
	Model  string
	Server string
}

// Options configure a Runner. Zero values take the defaults in brackets.
type Options struct {
	// Out is the output folder ["out"].
	Out string
	// Concurrency overrides the spec's concurrency when positive.
	Concurrency int
	// Resume keeps the earlier results in Out of the same session digest and runs only
	// sessions that have none or were interrupted (cancelled, crashed); RerunFailed
	// also runs the sessions whose earlier result is a failure.
	Resume, RerunFailed bool
	// Retry, when not nil, lists the failure classes (see ParseRetry) whose earlier
	// results resume runs again instead of DefaultRetry; it implies Resume.
	Retry []string
	// Resolve names the provider and model a session will use, the command line's
	// overrides applied, without making the provider. With it, a dry run shows them and
	// resume refuses earlier results of another provider or model (ErrResumeMismatch).
	Resolve func(jobs.Session) (ProviderInfo, error)
	// Filter keeps sessions whose key or job id matches this glob.
	Filter string
	// Shard selects a stable subset of the sessions.
	Shard Shard
	// Format of stdout [text]; Stdout receives it [io.Discard].
	Format sink.Format
	Stdout io.Writer
	// Progress receives the progress display [io.Discard]. Status, when set, is the live
	// status line of the terminal Progress is on: it shows the counts, an ETA and what
	// each running session does, and Progress gets one line per finished session; without
	// it progress is plain lines and a heartbeat. Color allows ANSI colour in Progress.
	Progress io.Writer
	Status   StatusLine
	Color    bool
	// StdoutShared says Stdout is on the terminal of Status: a session whose result the
	// text transcript showed there gets no second line from the progress. StdoutColor
	// allows ANSI colour in the text transcript on Stdout.
	StdoutShared, StdoutColor bool
	// Heartbeat is the interval of plain progress lines while nothing finishes [30s].
	Heartbeat time.Duration
	// Log receives diagnostics [zap.NewNop()].
	Log *zap.Logger
	// Now is the clock; NewID makes session ids.
	Now   func() time.Time
	NewID func() string
	// Providers makes each session's provider (required).
	Providers Providers
	// Throttled reports how long providers were paused by rate limits.
	Throttled func() (time.Duration, int)
	// Paced reports how long requests were held back by the providers' limiters.
	Paced func() time.Duration
	// Secrets are values to redact everywhere (API keys); the sessions' own secrets
	// (named in the spec) are added.
	Secrets []string
	// LookupEnv reads the environment for the spec's secrets [os.LookupEnv].
	LookupEnv func(string) (string, bool)
	// Environ is the base environment of tool processes and checks (API keys removed).
	Environ []string
	// Groups, when set, hears of the process group of every tool command and check.
	Groups tools.Groups
	// Home and InstructionHome feed the agent's prompt layers.
	Home, InstructionHome string
	// AccountHome is the home of the account agentrun runs as, from the password
	// database, whose credential stores the tools must not read where it is not Home:
	// $HOME unset, or set to a folder of a CI system's.
	AccountHome string
	// Version is written to run.json.
	Version string
	// Compaction tunes context compaction; a session's max_context sets MaxContext.
	Compaction agent.CompactConfig
	// GitHub, when set, receives the GitHub Actions integration outputs.
	GitHub *GitHub
	// SubAgentSlots bounds sub-agents running at once across the run [2×concurrency].
	SubAgentSlots int
	// Sandbox configures the workers that run every tool call and check.
	Sandbox SandboxOptions
	// Warnings go into the summary (Summary.Warnings) as they are, such as the
	// command line's note that no API key was set and the scripted model ran.
	Warnings []string
	// Telemetry, when set, observes the run as traces and metrics.
	Telemetry Telemetry
}

// Runner runs job specs. Create one per run.
type Runner struct {
	opts Options
	log  *zap.Logger

	probeOnce sync.Once
	probe     sandbox.Report

	// proxies are the network proxies of every session the runner runs: none lets a
	// tool through to another's listener, and on to that session's allowlist.
	proxies *netproxy.Group
}

// New returns a runner.
func New(opts Options) *Runner {
	if opts.Out == "" {
		opts.Out = "out"
	}
	if opts.Format == "" {
		opts.Format = sink.FormatText
	}
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 30 * time.Second
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewID == nil {
		opts.NewID = func() string { return newRunID(opts.Now()) }
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	return &Runner{opts: opts, log: opts.Log, proxies: netproxy.NewGroup()}
}

// newRunID is a session id: the seed's date and time, and 8 random hex digits so that
// thousands of sessions started in one second stay distinct.
func newRunID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// ErrLocked means another run holds the output folder.
var ErrLocked = errors.New("output folder is locked by another run")

// Run runs the selected sessions of spec and writes every artifact. The error is for
// failures of the run itself (the output folder cannot be written, the lock is held);
// failed sessions are reported in the summary.
func (r *Runner) Run(ctx context.Context, spec *jobs.Spec) (*Summary, error) {
	if r.opts.Providers == nil {
		return nil, errors.New("run: no providers")
	}
	plan, err := r.Plan(spec)
	if err != nil {
		return nil, err
	}
	if err := CheckWorkspaces(ctx, spec, plan.Run); err != nil {
		return nil, err
	}
	if err := r.checkSandbox(plan.Run); err != nil {
		return nil, err
	}
	if err := checkOpenFiles(min(plan.Concurrency, len(plan.Run))); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	if err := checkTasks(plan.Concurrency, plan.Run); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	if err := os.MkdirAll(r.opts.Out, 0o755); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	// The run names its output folder by its real path from here on: a link on the way
	// to it, which the tools may be able to replace, leads its later writes nowhere else.
	r.opts.Out = pathname.Real(absOr(r.opts.Out))
	lock, err := acquireLock(r.opts.Out)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	// The layers over the caches of a run that was killed (their names are never used
	// again), now that no other run uses the folder.
	removeLayers(filepath.Join(r.opts.Out, WorkspacesDir, cachesDir))
	start := r.opts.Now()
	info := r.runInfo(spec, plan, start)
	// The run's own files mask the secrets of every session.
	runSecrets := append([]string(nil), r.opts.Secrets...)
	for _, s := range plan.Run {
		runSecrets = append(runSecrets, secretsFor(r.opts, s)...)
	}
	files := sink.NewFiles(runSecrets)
	if err := files.WriteJSON(filepath.Join(r.opts.Out, RunFile), info); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	runLog, err := os.OpenFile(filepath.Join(r.opts.Out, RunLogFile), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	defer func() {
		// Like a failed flush below, a failed close costs the log, not the run.
		if err := runLog.Close(); err != nil {
			r.log.Error("close run.log", zap.Error(err))
		}
	}()
	// run.log is a rendering for people, written through a buffer (flushed as each
	// session ends and when the run ends): the durable record is each session's
	// events.jsonl, and a write per line from a hundred sessions through one lock costs
	// more than the log is worth.
	runLogBuf := bufio.NewWriterSize(runLog, 64<<10)

	// No tool may see the artifacts of the run's sessions.
	st := r.newRunState(spec, plan, runLogBuf, filepath.Join(r.opts.Out, SessionsDir))
	st.outDir = r.opts.Out // absolute and real since the folder was made
	st.results = make([]*protocol.Result, len(plan.Run))
	if len(plan.Resolved) == len(plan.Run) {
		st.resolved = make(map[string]ProviderInfo, len(plan.Run))
		for i, s := range plan.Run {
			st.resolved[s.Key] = plan.Resolved[i]
		}
	}
	ctx, runSpan := r.startRun(ctx, spec, len(plan.Run), runSecrets)
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	st.cancelRun = cancelRun
	if st.disk, err = newDiskGuard(r.opts.Out, len(plan.Run), diskFree, cancelRun, r.log); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	defer st.disk.close() // after the reports, which may need the reserve
	files.OnFull(st.disk.Full)
	if st.disk != nil {
		// The reports' own rooms, as each result has its own (resultRoom): above all
		// their inodes, which a tool that makes files until none is left, and goes on,
		// takes from the reserve as soon as the guard gives a part of it up.
		for _, name := range []string{SummaryFile, SummaryMDFile, JUnitFile, ReportFile, RunFile} {
			_ = sink.ReserveFile(filepath.Join(r.opts.Out, name), reportRoom)
		}
	}
	st.progress = newProgress(r.opts, len(plan.Run)+len(plan.Reused), plan.Concurrency, r.opts.Now)
	for _, res := range plan.Reused {
		st.progress.reused(res)
	}

	if r.opts.GitHub != nil {
		r.opts.GitHub.Mask(runSecrets)
	}
	stopProgress := st.progress.start()
	st.spawner = worker.NewSpawner()
	p := pool.New().WithMaxGoroutines(plan.Concurrency)
	for i, s := range plan.Run {
		if err := runCtx.Err(); err != nil {
			st.results[i] = st.notStarted(runCtx, s)
			st.progress.finished(st.results[i])
			continue
		}
		if !st.budget.admit(s.Settings.Budget.MaxCostUSD) {
			st.results[i] = st.refusedBudget(s)
			st.progress.finished(st.results[i])
			continue
		}
		p.Go(func() {
			// The run may have been interrupted while this session waited for a slot.
			if runCtx.Err() != nil {
				st.results[i] = st.notStarted(runCtx, s)
			} else {
				st.results[i] = st.runSession(runCtx, s, st.dirOf(s))
			}
			st.progress.finished(st.results[i]) // once per session, whatever its attempts
			st.budget.finished(st.results[i])
		})
	}
	p.Wait()
	if st.temp.t != nil {
		if err := st.temp.t.remove(); err != nil {
			r.log.Warn("remove the sessions' temporary folders", zap.Error(err))
		}
	}
	if err := st.spawner.Close(); err != nil {
		r.log.Warn("end the workers' spawner", zap.Error(err))
	}
	stopProgress()
	if err := st.runLog.Flush(); err != nil {
		r.log.Error("write run.log", zap.Error(err))
	}
	// The sessions' files were written without a sync each; one sync of the file
	// system makes them durable before the summaries say they exist.
	if err := syncOut(r.opts.Out); err != nil {
		r.log.Error("sync the output folder", zap.Error(err))
	}

	end := r.opts.Now()
	sum := st.summary(start, end)
	st.endRun(runSpan)
	if err := r.writeReports(files, sum, info, end); err != nil {
		return sum, err
	}
	if r.opts.GitHub != nil {
		if err := r.opts.GitHub.Report(sum, r.opts.Out); err != nil {
			return sum, fmt.Errorf("run: github: %w", err)
		}
	}
	return sum, nil
}

// runState is one run in progress.
type runState struct {
	r         *Runner
	spec      *jobs.Spec
	plan      *Plan
	runLog    *sink.SyncWriter
	stdout    *sink.SyncWriter
	results   []*protocol.Result
	budget    *runBudget
	cancelRun context.CancelCauseFunc
	subAgents chan struct{}
	progress  *progress
	lines     map[string]int // job id: its line in the spec file
	primer    *primer        // writes each shared prompt prefix to the provider's cache once
	disk      *diskGuard     // nil when the run has no output folder of its own
	// temp is the run's folder of its sessions' TMPDIRs (level landlock), made on
	// first use (tempRoot) and removed when the run ends.
	temp struct {
		once sync.Once
		t    *runTemp
		err  error
	}
	// rootOnly is what the host lets nobody but root read, listed once per run.
	rootOnly func() []string
	// git is the git that makes worktrees and reads workspaces.
	git gitBin
	// checkouts holds, per workspace folder, the scan of the credentials its git
	// config holds (checkoutCreds); guards, per shared workspace folder, its gitGuard;
	// gitSources, per work tree, what its workspaces' own git folders are made from.
	checkouts  perFolder[*checkoutCreds]
	guards     perFolder[*gitGuard]
	gitSources perFolder[*gitSource]
	// userGit is what the user's git configs that hold credentials change for the
	// tools (scanUser), and ciState the files of the CI system's state for its steps
	// (ciState), each found once per run.
	userGit func() (userGit, error)
	ciState func() []string
	// prices caches the price lookups of the run's models.
	pricesMu sync.Mutex
	prices   map[string]knownPrice
	// resolved holds the provider and model Options.Resolve gave each session to run.
	resolved map[string]ProviderInfo
	// sessionsDir is the folder of the sessions' artifacts, which no tool may see.
	sessionsDir string
	// outDir is the run's output folder (empty in RunSession), which no tool may see
	// either where its workspace is not inside it (see openSandbox).
	outDir string
	// one configures the session of RunSession; it is zero in a run of a spec.
	one SessionOptions
	// spawner starts the sessions' workers of level strict in a run of a spec (nil in
	// RunSession, which starts one worker: its own fork costs less than a spawner).
	spawner *worker.Spawner
}

// newRunState is the state shared by the sessions of plan, a run of spec: its run.log
// is runLog, and sessionsDir is hidden from every tool. Sub-agents get twice the
// plan's concurrency in slots unless Options.SubAgentSlots says otherwise.
func (r *Runner) newRunState(spec *jobs.Spec, plan *Plan, runLog io.Writer, sessionsDir string) *runState {
	slots := r.opts.SubAgentSlots
	if slots <= 0 {
		slots = 2 * plan.Concurrency
	}
	st := &runState{
		r: r, spec: spec, plan: plan, git: lookGit(), // before any session runs
		runLog: sink.NewSyncWriter(runLog), stdout: sink.NewSyncWriter(r.opts.Stdout),
		budget: newRunBudget(spec.Budget), lines: jobLines(spec), primer: newPrimer(r.opts.Now),
		sessionsDir: sessionsDir, subAgents: make(chan struct{}, slots), rootOnly: sync.OnceValue(sandbox.RootOnly),
	}
	st.ciState = sync.OnceValue(func() []string {
		exe, _ := r.opts.Sandbox.binary() // none: every session fails to start its worker
		return ciState(r.opts.Environ, absOr(exe), os.Getpid())
	})
	st.userGit = sync.OnceValues(func() (userGit, error) {
		u, err := st.git.scanUser(context.Background(), r.opts.Home, r.opts.AccountHome, r.opts.Environ)
		if err != nil || len(u.clean) == 0 {
			return u, err
		}
		// The clean copies go in the run's temporary folder, removed when it ends.
		dir, err := st.tempRoot()
		if err != nil {
			return userGit{}, err
		}
		return u.written(dir)
	})
	return st
}

// dirOf is the artifact folder of a session of the run.
func (st *runState) dirOf(s jobs.Session) string {
	return filepath.Join(st.r.opts.Out, SessionsDir, s.Key)
}

// summary collects every result, the reused ones included, sorted by key.
func (st *runState) summary(start, end time.Time) *Summary {
	all := append([]*protocol.Result(nil), st.plan.Reused...)
	for _, res := range st.results {
		if res != nil {
			all = append(all, res)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Key < all[j].Key })
	var throttled time.Duration
	var pauses int
	if st.r.opts.Throttled != nil {
		throttled, pauses = st.r.opts.Throttled()
	}
	sum := newSummary(st.spec, st.plan, all, start, end, throttled, pauses, st.budget.refusedAny())
	if st.r.opts.Paced != nil {
		sum.Totals.PacedMS = st.r.opts.Paced().Milliseconds()
	}
	sum.Version = st.r.opts.Version
	sum.warn(append(slices.Clone(st.r.opts.Warnings), writableCaches(st.plan.Run, st.r.opts.Home)...))
	return sum
}

// runBudget enforces the run-level cost cap: it stops admitting sessions before the cap
// would be exceeded and cancels the run once it is.
type runBudget struct {
	mu           sync.Mutex
	cap          float64
	spent        float64
	running      int
	finishedN    int
	finishedCost float64
	refused      bool
}

func newRunBudget(b jobs.Budget) *runBudget { return &runBudget{cap: b.MaxCostUSD} }

// admit reserves room for one more session, estimated at its own cap or at the mean
// cost of the sessions finished so far.
func (b *runBudget) admit(sessionCap float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cap <= 0 {
		b.running++
		return true
	}
	estimate := sessionCap
	if estimate <= 0 && b.finishedN > 0 {
		estimate = b.finishedCost / float64(b.finishedN)
	}
	if b.spent >= b.cap || b.spent+estimate*float64(b.running+1) > b.cap {
		b.refused = true
		return false
	}
	b.running++
	return true
}

func (b *runBudget) finished(res *protocol.Result) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running--
	b.finishedN++
	if res != nil && res.TotalCostUSD != nil {
		b.finishedCost += *res.TotalCostUSD
	}
}

// spend adds usd and reports whether the cap is now exceeded.
func (b *runBudget) spend(usd float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent += usd
	if b.cap > 0 && b.spent > b.cap {
		b.refused = true
		return true
	}
	return false
}

func (b *runBudget) refusedAny() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}

// tempRoot is the run's folder of its sessions' TMPDIRs, made on first use.
func (st *runState) tempRoot() (string, error) {
	st.temp.once.Do(func() {
		st.temp.t, st.temp.err = newRunTemp(st.r.opts.Sandbox.TempDir)
	})
	if st.temp.err != nil {
		return "", st.temp.err
	}
	return st.temp.t.dir, nil
}

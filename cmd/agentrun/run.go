package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/providers"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/telemetry"
)

const runSynopsis = `agentrun run JOBS.yaml [--out DIR] [--concurrency N] [--resume] [--rerun-failed]
               [--retry-errors CLASSES] [--shard I/N] [--filter GLOB] [--dry-run]
               [--output-format text|stream-json|claude]`

const runExamples = `  agentrun run examples/quickstart.yaml
  agentrun run evals.yaml --out results --concurrency 16 --output-format stream-json > events.jsonl
  agentrun run evals.yaml --out results --resume              # after a crash: finish what is missing
  agentrun run evals.yaml --out results --rerun-failed        # run the failed sessions again
  agentrun run evals.yaml --out results --retry-errors provider,cancelled,crashed   # after an outage
  agentrun run evals.yaml --shard 2/8 --out shard-2           # one of 8 machines; join with agentrun merge
  agentrun run evals.yaml --filter 'fix-*' --dry-run          # list what would run and the cost ceiling`

// runFlags are the flags shared by run and exec that pick the provider.
func providerFlags(fs interface {
	StringVar(*string, string, string, string)
}, o *providers.Overrides) {
	fs.StringVar(&o.Provider, "provider", "", "provider: anthropic, openai, responses or scripted (overrides the spec and $AGENTRUN_PROVIDER)")
	fs.StringVar(&o.Model, "model", "", "model name (overrides the spec and $AGENTRUN_MODEL)")
	fs.StringVar(&o.BaseURL, "base-url", "", "provider base URL (overrides the spec and $ANTHROPIC_BASE_URL / $OPENAI_BASE_URL)")
}

func (a *App) cmdRun(ctx context.Context, args []string) error {
	fs := newFlags("run")
	out := fs.String("out", "", "output folder (default $AGENTRUN_OUT, else out)")
	concurrency := fs.Int("concurrency", 0, "sessions at once (overrides the spec and $AGENTRUN_CONCURRENCY)")
	resume := fs.Bool("resume", false, "keep earlier results in --out and run only the sessions missing or interrupted")
	rerun := fs.Bool("rerun-failed", false, "like --resume, and also run again the sessions whose earlier result failed")
	retryErrors := fs.String("retry-errors", "", "like --resume, and run again the sessions whose earlier failure is of these comma-separated classes: statuses without error_ (provider, timeout, inactivity, auth, checks, …, cancelled, crashed) or error kinds (http_429, overloaded, network, …); the list replaces the default cancelled,crashed")
	shard := fs.String("shard", "", "run shard I of N (0-based), e.g. 0/4 (default $AGENTRUN_SHARD, or $JOB_COMPLETION_INDEX with $AGENTRUN_SHARD_TOTAL)")
	filter := fs.String("filter", "", "run only sessions whose key or job id matches one of these comma-separated globs")
	dry := fs.Bool("dry-run", false, "print the sessions, what resume would skip and the cost ceiling, then exit")
	format := fs.String("output-format", "text", "stdout format: text (live transcript and summary), stream-json (every event, one JSON line) or claude (Claude Code's stream-json)")
	progress := fs.String("progress", "auto", "progress on stderr: auto, live, plain or off")
	logFormat := fs.String("log-format", "", "log format on stderr: console or json (default $AGENTRUN_LOG_FORMAT, else console)")
	var ov providers.Overrides
	providerFlags(fs, &ov)
	pos, err := a.parse(fs, runSynopsis, runExamples, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("run: want one job spec file, got %d arguments (see 'agentrun run --help')", len(pos))
	}
	outFormat, err := sink.ParseFormat(*format, sink.FormatText, sink.FormatStreamJSON, sink.FormatClaude)
	if err != nil {
		return usagef("run: --output-format %w", err)
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	disp := a.display(*progress, first(*logFormat, cfg.LogFormat), cfg)
	log, err := a.newLogger(disp.log, first(*logFormat, cfg.LogFormat), cfg.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }() // stderr sync errors are not actionable
	spec, err := jobs.Load(pos[0], a.lookupEnv)
	if err != nil {
		return specError(err)
	}
	shardSpec := *shard
	if shardSpec == "" {
		if shardSpec, err = cfg.shardFromEnv(); err != nil {
			return err
		}
	}
	var sh runner.Shard
	if shardSpec != "" {
		if sh, err = runner.ParseShard(shardSpec); err != nil {
			return usageError{err}
		}
	}
	if err := runner.ValidateFilter(*filter); err != nil {
		return usageError{err}
	}
	var retry []string
	if *retryErrors != "" {
		if *rerun {
			return usagef("run: --retry-errors and --rerun-failed exclude each other (--rerun-failed runs every failure again)")
		}
		if retry, err = runner.ParseRetry(*retryErrors); err != nil {
			return usagef("run: --retry-errors: %w", err)
		}
	}
	resumeFlag := "--resume"
	switch {
	case *rerun:
		resumeFlag = "--rerun-failed"
	case retry != nil:
		resumeFlag = "--retry-errors"
	}
	if *concurrency == 0 {
		*concurrency = cfg.Concurrency
	}
	if *concurrency < 0 {
		return usagef("run: --concurrency must be positive")
	}
	outDir := first(*out, cfg.Out, "out")
	var tel *telemetry.Telemetry
	secrets := cfg.keys()
	if !*dry {
		var telSecrets []string
		tel, telSecrets = a.newTelemetry(log)
		defer flushTelemetry(tel)
		secrets = append(secrets, telSecrets...)
	}
	provs := providers.New(cfg.providers(), ov, log)
	if tel != nil && spec.Telemetry.PropagateToProvider {
		provs.Wrap = tel.Transport
	}
	defer provs.Close()
	// Resolve every session's provider now: a missing key is a usage error before
	// anything runs.
	warnings, err := a.checkProviders(spec, provs)
	if err != nil {
		return err
	}
	if first(*logFormat, cfg.LogFormat) == "json" && disp.progress != io.Discard {
		// stderr holds JSON lines only: progress lines become log entries.
		disp.color, disp.progress = false, newLogLines(log)
	}
	var reaping *reaper
	if !*dry {
		reaping = startReaper(a.Self, log)
		defer reaping.close()
	}
	opts := runner.Options{
		Out: outDir, Concurrency: *concurrency, Resume: *resume, RerunFailed: *rerun, Retry: retry, Resolve: provs.Resolve,
		Filter: *filter, Shard: sh,
		Format: outFormat, Stdout: disp.stdout, Progress: disp.progress, Status: disp.status, Color: disp.color,
		StdoutShared: disp.shared, StdoutColor: disp.stdoutColor,
		Log: log, Providers: provs, Throttled: provs.Throttled, Paced: provs.Paced, Secrets: secrets, LookupEnv: a.lookupEnv,
		Environ: reaping.environ(a.toolEnviron(cfg.UserHome)), Groups: reaping.groups(),
		Home: cfg.UserHome, AccountHome: cfg.AccountHome, InstructionHome: cfg.Home, Version: version(), Compaction: cfg.Compact.config(0),
		Warnings: warnings,
	}
	if tel != nil {
		opts.Telemetry = tel
	}
	if cfg.GitHubActions {
		if opts.GitHub = runner.GitHubFromEnv(a.getenv, a.Stdout); opts.GitHub != nil {
			opts.GitHub.Version = version()
		}
	}
	r := runner.New(opts)
	if *dry {
		plan, err := r.Plan(spec)
		if errors.Is(err, runner.ErrResumeMismatch) {
			return usagef("run: %s: %w", resumeFlag, err)
		}
		if err != nil {
			return specError(err)
		}
		if err := runner.CheckWorkspaces(ctx, spec, plan.Run); err != nil {
			return specError(err)
		}
		_, _ = fmt.Fprint(a.Stdout, runner.DryRun(spec, plan))
		return nil
	}
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := r.Run(sigCtx, spec)
	flushTelemetry(tel) // also after SIGTERM, within its bound
	interrupted := sigCtx.Err() != nil && ctx.Err() == nil
	if err != nil {
		switch {
		case errors.Is(err, runner.ErrResumeMismatch):
			return usagef("run: %s: %w", resumeFlag, err)
		case errors.Is(err, runner.ErrLocked), errors.Is(err, runner.ErrSandbox), errors.Is(err, runner.ErrNoMatch),
			errors.Is(err, runner.ErrOpenFiles), errors.Is(err, runner.ErrTasks):
			return usageError{err}
		}
		return err
	}
	if outFormat == sink.FormatText && opts.GitHub == nil {
		_, _ = fmt.Fprintf(a.Stdout, "\n%s", sum.Text())
	}
	log.Info("run finished: "+sum.Headline(), zap.String("out", outDir))
	return exitError{code: sum.ExitCode(interrupted)}
}

// checkProviders resolves the provider of every session of spec once
// (providers.Pool.Check).
func (a *App) checkProviders(spec *jobs.Spec, p *providers.Pool) ([]string, error) {
	sessions, err := spec.Sessions()
	if err != nil {
		return nil, specError(err)
	}
	return p.Check(sessions)
}

// specError marks errors of the spec as usage errors (exit 2).
func specError(err error) error {
	var se *jobs.SpecError
	if errors.As(err, &se) {
		return err
	}
	return usageError{err}
}

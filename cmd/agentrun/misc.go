package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/protocol/eventschema"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/transport/scripted"
)

// buildVersion is set with -ldflags "-X main.buildVersion=v1.2.3".
var buildVersion = ""

// version is the build's version: the one set at link time, else the module version
// from the build info, else its VCS revision ("dev+3f2a9c1d0e4b", "-dirty" when the
// tree had changes), and "dev" only when the build knows none of these.
func version() string {
	info, _ := debug.ReadBuildInfo()
	return versionOf(buildVersion, info)
}

func versionOf(linked string, info *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	if info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "dev"
	}
	v := "dev+" + rev[:min(len(rev), 12)]
	if modified == "true" {
		v += "-dirty"
	}
	return v
}

func (a *App) cmdVersion(_ context.Context, args []string) error {
	fs := newFlags("version")
	pos, err := a.parse(fs, "agentrun version", "  agentrun version    # version, Go release and platform, e.g. agentrun v1.2.0 (go1.26.0 linux/amd64)", args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("version: unexpected argument %q", pos[0])
	}
	_, _ = fmt.Fprintf(a.Stdout, "agentrun %s (%s %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

func (a *App) cmdValidate(ctx context.Context, args []string) error {
	fs := newFlags("validate")
	quiet := fs.Bool("quiet", false, "print nothing when the spec is valid")
	pos, err := a.parse(fs, "agentrun validate JOBS.yaml...", "  agentrun validate examples/*.yaml", args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("validate: want at least one job spec file")
	}
	var failed error
	for _, path := range pos {
		spec, err := jobs.Load(path, a.lookupEnv)
		if err == nil {
			var sessions []jobs.Session
			sessions, err = spec.Sessions()
			if err == nil {
				_, err = loadScripts(sessions)
			}
			if err == nil {
				err = runner.CheckWorkspaces(ctx, spec, sessions)
			}
			if err == nil && !*quiet {
				_, _ = fmt.Fprintf(a.Stdout, "%s: valid, %d jobs, %d sessions\n", path, len(spec.Jobs), len(sessions))
				for _, s := range sessions {
					_, _ = fmt.Fprintf(a.Stdout, "  %s\n", s.Key)
				}
			}
		}
		if err != nil {
			_, _ = fmt.Fprintf(a.Stderr, "%v\n", err)
			failed = exitError{code: exitUsage}
		}
	}
	return failed
}

// loadScripts parses every scripted-model script the sessions name, once each, and
// returns them by path.
func loadScripts(sessions []jobs.Session) (map[string]*scripted.Script, error) {
	scripts := map[string]*scripted.Script{}
	var errs []error
	for _, s := range sessions {
		path := s.Settings.Script
		if _, seen := scripts[path]; path == "" || seen {
			continue
		}
		sc, err := scripted.LoadScript(path)
		if err != nil {
			errs = append(errs, err)
		}
		scripts[path] = sc
	}
	return scripts, errors.Join(errs...)
}

func (a *App) cmdSchema(_ context.Context, args []string) error {
	fs := newFlags("schema")
	events := fs.Bool("events", false, "print the JSON Schema of the event lines (stream.jsonl, events.jsonl, stream-json) instead")
	pos, err := a.parse(fs, "agentrun schema [--events] > agentrun.schema.json",
		"  agentrun schema > .agentrun.schema.json   # then point yaml-language-server at it\n  agentrun schema --events > events.schema.json", args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("schema: unexpected argument %q", pos[0])
	}
	if *events {
		_, err = a.Stdout.Write(eventschema.Schema())
		return err
	}
	_, err = a.Stdout.Write(append(jobs.Schema(), '\n'))
	return err
}

func (a *App) cmdReplay(_ context.Context, args []string) error {
	fs := newFlags("replay")
	format := fs.String("output-format", "human", "human (text), stream-json, claude (Claude Code's stream-json) or resp")
	pos, err := a.parse(fs, "agentrun replay EVENTS.jsonl [--output-format human|stream-json|claude|resp]",
		"  agentrun replay out/sessions/fix-vet/events.jsonl\n  agentrun replay --output-format claude out/sessions/fix-vet/events.jsonl > execution.jsonl\n  agentrun replay ~/.agentrun/projects/-work-app/20260506-123456-1a2b/events.jsonl", args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("replay: want one events.jsonl file")
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return usageError{err}
	}
	defer func() { _ = f.Close() }()
	var out sink.Sink
	switch *format {
	case "human":
		out = sink.NewText(a.Stdout, sink.TextOptions{Color: a.colorOn(isTerminal(a.Stdout))})
	case "stream-json":
		out = sink.NewStreamJSON(a.Stdout, protocol.Envelope{})
	case "claude":
		out = sink.NewClaude(a.Stdout, version())
	case "resp":
		out = sink.NewRESP(a.Stdout)
	default:
		return usagef("replay: --output-format %q: want human, stream-json, claude or resp", *format)
	}
	r := protocol.NewEventReader(f)
	events := 0
	for r.Next() {
		events++
		if err := out.Write(r.Message()); err != nil {
			return err
		}
	}
	cerr := out.Close()
	// A file that is not an event log (summary.json, result.json) is a usage error.
	if err := r.Err(); err != nil {
		return usageError{fmt.Errorf("replay %s: not an events.jsonl file: %w", pos[0], err)}
	}
	if events == 0 {
		return usagef("replay %s: no events: want a session's events.jsonl, such as out/sessions/KEY/events.jsonl", pos[0])
	}
	return cerr
}

func (a *App) cmdMerge(_ context.Context, args []string) error {
	fs := newFlags("merge")
	out := fs.String("out", "", "folder for the merged summary.json, summary.md and junit.xml (required)")
	pos, err := a.parse(fs, "agentrun merge --out DIR SHARD_DIR...",
		"  agentrun merge --out merged shard-0 shard-1 shard-2 shard-3\n  agentrun merge --out merged results-shard-*", args)
	if err != nil {
		return err
	}
	if *out == "" || len(pos) == 0 {
		return usagef("merge: want --out DIR and at least one shard folder")
	}
	sum, err := runner.Merge(*out, pos)
	if errors.Is(err, runner.ErrMergeInputs) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	_, _ = fmt.Fprint(a.Stdout, sum.Text())
	if cfg, cerr := a.config(); cerr == nil && cfg.GitHubActions {
		if gh := runner.GitHubFromEnv(a.getenv, a.Stdout); gh != nil {
			if err := gh.Report(sum, *out); err != nil {
				return err
			}
		}
	}
	return exitError{code: sum.ExitCode(false)}
}

func (a *App) cmdReport(_ context.Context, args []string) error {
	fs := newFlags("report")
	pos, err := a.parse(fs, "agentrun report DIR",
		"  agentrun report out        # rewrite out/report.html\n  agentrun report merged     # the output of agentrun merge: details from the shards' folders", args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("report: want one output folder (of agentrun run or merge), got %d arguments", len(pos))
	}
	sum, err := runner.Report(pos[0])
	if errors.Is(err, runner.ErrNoSummary) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(a.Stdout, "%s: %s\n", filepath.Join(pos[0], runner.ReportFile), sum.Headline())
	return nil
}

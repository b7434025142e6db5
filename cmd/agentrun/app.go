package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/providers"
	"github.com/agentrun/agentrun/sink"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInternal    = 3
	exitBudget      = 4
	exitInterrupted = 130
)

// App is the command line, with its streams and environment injected so tests can run
// it in-process.
type App struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Env is the environment as KEY=VALUE pairs.
	Env []string
	// StdinIsTerminal and StderrIsTerminal override terminal detection (tests).
	StdinIsTerminal, StderrIsTerminal *bool
	// Self is the agentrun executable, started again as the process-group reaper; ""
	// (agentrun inside a test) runs without one.
	Self string

	errOnce sync.Once
	errw    *sink.SyncWriter
}

// stderr returns Stderr behind one lock, for the writers that share it from many
// goroutines during a run: the logger and the progress display.
func (a *App) stderr() io.Writer {
	a.errOnce.Do(func() { a.errw = sink.NewSyncWriter(a.Stderr) })
	return a.errw
}

// usageError is a mistake on the command line or in a spec: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// first returns the first of vs that is not empty.
func first(vs ...string) string { return cmp.Or(vs...) }

// exitError carries a chosen exit code for an outcome already reported.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(a *App, ctx context.Context, args []string) error
}

func (a *App) commands() []command {
	return []command{
		{"run", "run the sessions of a job spec", (*App).cmdRun},
		{"exec", "run one session from the command line", (*App).cmdExec},
		{"validate", "check a job spec and list its sessions", (*App).cmdValidate},
		{"schema", "print the JSON Schema of job specs", (*App).cmdSchema},
		{"replay", "render a session's events.jsonl as text", (*App).cmdReplay},
		{"merge", "join the outputs of sharded runs", (*App).cmdMerge},
		{"report", "rewrite the HTML report of a run's or a merge's output folder", (*App).cmdReport},
		{"fake-server", "serve the scripted model over HTTP in the three wire formats", (*App).cmdFakeServer},
		{"sandbox", "show how this machine can confine tools (sandbox check)", (*App).cmdSandbox},
		{"version", "print the version", (*App).cmdVersion},
	}
}

// usage writes the commands to w. Like every message of the command line to its own
// stdout and stderr, a failed write is not reported: there is nowhere left to say it.
func (a *App) usage(w io.Writer) {
	_, _ = fmt.Fprintf(w, "agentrun runs LLM coding agents headless: batches from YAML job specs, or one session.\n\nUsage:\n  agentrun COMMAND [flags]\n\nCommands:\n")
	for _, c := range a.commands() {
		_, _ = fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	_, _ = fmt.Fprintf(w, "\nRun 'agentrun COMMAND --help' for a command's flags and examples.\n")
}

// Main runs the command line and returns the process exit code. It is the only place
// that turns errors into exit codes.
func (a *App) Main(ctx context.Context, args []string) int {
	if len(args) == 0 {
		a.usage(a.Stderr)
		return exitUsage
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "help" {
		a.usage(a.Stdout)
		return exitOK
	}
	for _, c := range a.commands() {
		if c.name == name {
			return a.exitCode(c.run(a, ctx, args[1:]))
		}
	}
	_, _ = fmt.Fprintf(a.Stderr, "agentrun: unknown command %q\n\n", name)
	a.usage(a.Stderr)
	return exitUsage
}

// exitCode reports err once and maps it to an exit code.
func (a *App) exitCode(err error) int {
	var ee exitError
	var ue usageError
	var se *jobs.SpecError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &se):
		_, _ = fmt.Fprintf(a.Stderr, "agentrun: invalid job spec:\n%s\n", se.Error())
		return exitUsage
	case errors.As(err, &ue), errors.Is(err, providers.ErrUsage):
		_, _ = fmt.Fprintf(a.Stderr, "agentrun: %v\n", err)
		return exitUsage
	}
	_, _ = fmt.Fprintf(a.Stderr, "agentrun: %v\n", err)
	return exitInternal
}

// getenv reads the injected environment.
func (a *App) getenv(name string) string {
	v, _ := a.lookupEnv(name)
	return v
}

func (a *App) lookupEnv(name string) (string, bool) {
	for i := len(a.Env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(a.Env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

func (a *App) envMap() map[string]string {
	m := make(map[string]string, len(a.Env))
	for _, kv := range a.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (a *App) stderrTTY() bool {
	if a.StderrIsTerminal != nil {
		return *a.StderrIsTerminal
	}
	return isTerminal(a.Stderr)
}

func (a *App) stdinTTY() bool {
	if a.StdinIsTerminal != nil {
		return *a.StdinIsTerminal
	}
	return isTerminal(a.Stdin)
}

// newFlags returns a quiet flag set: parse prints help and errors itself.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args, allowing flags after positional arguments, and prints help when
// asked. It returns the positional arguments.
func (a *App) parse(fs *flag.FlagSet, synopsis, examples string, args []string) ([]string, error) {
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) || (err != nil && strings.Contains(err.Error(), "-help")) {
			a.help(a.Stdout, fs, synopsis, examples)
			return nil, flag.ErrHelp
		}
		if err != nil {
			return nil, usageError{fmt.Errorf("%s: %w (see 'agentrun %s --help')", fs.Name(), err, fs.Name())}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func (a *App) help(w io.Writer, fs *flag.FlagSet, synopsis, examples string) {
	_, _ = fmt.Fprintf(w, "Usage:\n  %s\n\nFlags:\n", synopsis)
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "help" {
			return
		}
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if len(f.Name) == 1 {
			line = "  -" + f.Name // a short flag, as the synopsis writes it
		}
		if name != "" {
			line += " " + name
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		_, _ = fmt.Fprintf(w, "%-28s %s\n", line, usage)
	})
	if examples != "" {
		_, _ = fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(examples, "\n"))
	}
}

// newLogger builds the zap logger writing to w (stderr): console format (colour as
// colorOn decides for stderr), or JSON when asked.
func (a *App) newLogger(w io.Writer, format, level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, usagef("log level %q: want debug, info, warn or error", level)
	}
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "ts"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder
	switch format {
	case "", "console":
		enc.EncodeLevel = zapcore.CapitalLevelEncoder
		if a.colorOn(a.stderrTTY()) {
			enc.EncodeLevel = zapcore.CapitalColorLevelEncoder
		}
		enc.EncodeCaller = nil
		encoder = zapcore.NewConsoleEncoder(enc)
	case "json":
		encoder = zapcore.NewJSONEncoder(enc)
	default:
		return nil, usagef("--log-format %q: want console or json", format)
	}
	return zap.New(zapcore.NewCore(encoder, zapcore.AddSync(w), lvl)), nil
}

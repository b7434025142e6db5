package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sink"
)

// display is how a run shows itself: where its progress, its log and its stdout go, and
// which of them get colour.
type display struct {
	progress io.Writer
	status   runner.StatusLine // the live status line; nil for plain progress lines
	log      io.Writer         // the logger's stream
	stdout   io.Writer
	// shared says stdout is on the status line's terminal.
	shared             bool
	color, stdoutColor bool
}

// display decides how progress is shown (--progress mode): a live status line on a
// terminal outside CI, plain lines otherwise. On a live terminal the log, and stdout when
// it is the same terminal, pass around the status line. Colour is decided for each stream
// by its own terminal.
func (a *App) display(mode, logFormat string, cfg envConfig) display {
	tty := a.stderrTTY()
	d := display{progress: a.stderr(), log: a.stderr(), stdout: a.Stdout, color: a.colorOn(tty),
		stdoutColor: a.colorOn(isTerminal(a.Stdout))}
	ci := cfg.CI != "" && cfg.CI != "false" || cfg.GitHubActions
	live := tty && !ci && a.getenv("TERM") != "dumb"
	switch mode {
	case "off":
		d.progress, d.color = io.Discard, false
		return d
	case "live":
		live = true
	case "plain":
		live = false
	}
	if !live || logFormat == "json" {
		// With JSON logs stderr holds JSON lines only, and the progress lines become log
		// entries (see logLines).
		return d
	}
	term := sink.NewTerminal(a.stderr(), columns(a.Stderr))
	d.status, d.progress, d.log = term, term.Lines(a.stderr()), term.Lines(a.stderr())
	if sameFile(a.Stdout, a.Stderr) {
		d.stdout, d.shared = term.Lines(a.Stdout), true
	}
	return d
}

// colorOn decides whether a stream gets ANSI colour: NO_COLOR set and not empty turns it
// off (no-color.org); else FORCE_COLOR set and not empty, other than 0 or false, turns it
// on (force-color.org); else a terminal gets colour unless TERM is dumb.
func (a *App) colorOn(tty bool) bool {
	if a.getenv("NO_COLOR") != "" {
		return false
	}
	switch a.getenv("FORCE_COLOR") {
	case "", "0", "false":
	default:
		return true
	}
	return tty && a.getenv("TERM") != "dumb"
}

// sameFile reports whether x and y are one open file: the same terminal, or the same
// pipe or file of `2>&1`.
func sameFile(x, y any) bool {
	fx, ok := x.(*os.File)
	if !ok {
		return false
	}
	fy, ok := y.(*os.File)
	if !ok {
		return false
	}
	sx, err := fx.Stat()
	if err != nil {
		return false
	}
	sy, err := fy.Stat()
	return err == nil && os.SameFile(sx, sy)
}

// columns returns the function that reads the width of the terminal w at each call
// (TIOCGWINSZ), 0 when w is no terminal.
func columns(w any) func() int {
	f, ok := w.(*os.File)
	if !ok {
		return func() int { return 0 }
	}
	return func() int {
		raw, err := f.SyscallConn()
		if err != nil {
			return 0
		}
		n := 0
		_ = raw.Control(func(fd uintptr) { // a failed ioctl leaves the width unknown
			if ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ); err == nil {
				n = int(ws.Col)
			}
		})
		return n
	}
}

// formatSink is the sink that writes one session's messages to stdout in format f:
// exec's and replay's output, the text in colour on a terminal.
func (a *App) formatSink(f sink.Format) (sink.Sink, error) {
	return sink.ForFormat(f, a.Stdout, sink.FormatOptions{Version: version(),
		Text: sink.TextOptions{Color: a.colorOn(isTerminal(a.Stdout))}})
}

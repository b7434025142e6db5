// Command agentrun runs LLM coding-agent sessions headless: many at once from a YAML job
// spec (run), or one from the command line (exec).
package main

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/agentrun/agentrun/worker"
)

// gcPercent is the garbage collector's target unless GOGC says otherwise. agentrun's
// live heap is small (well under a megabyte per running session) while it allocates
// steadily, so the default of 100 collects very often; 400 halves the collector's CPU
// time in the 1,000-session benchmark at about 0.2 MB of heap per running session.
const gcPercent = 400

func main() {
	os.Exit(cli())
}

// cli is the program: a worker, the reaper, or the command of os.Args, whose exit code
// it returns. The end-to-end tests run it in a test binary that then lists the
// goroutines still alive (leakcheck_test.go).
func cli() int {
	worker.ExitIfWorker()
	if len(os.Args) == 3 && os.Args[1] == reaperArg {
		os.Exit(min(reap(readGroups(os.Stdin), "/proc", os.Args[2]), 1))
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	app := &App{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Env:    os.Environ(),
	}
	if self, err := os.Executable(); err == nil {
		app.Self = self
	}
	return app.Main(context.Background(), os.Args[1:])
}

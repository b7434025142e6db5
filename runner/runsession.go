package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// SessionOptions configure RunSession.
type SessionOptions struct {
	// SessionID names the session in its events and result [Options.NewID()].
	SessionID string
	// Persistent says the folder is the caller's and holds the session's history,
	// which this run continues: it is not emptied, its streams (events.jsonl,
	// stream.jsonl, transcript.txt) and messages.jsonl are appended to, result.json
	// is replaced, and the session gets no whole-session retries, which would move its
	// history aside.
	Persistent bool
	// Stdout, when set, makes the sink that shows an attempt on stdout, in place of
	// what Options.Format and Options.Stdout would render. It sits behind the
	// session's redactor like every artifact, and is closed with them.
	Stdout func() (sink.Sink, error)
}

// RunSession runs the one session s, its artifacts in dir, exactly as Run runs each
// session of a spec: the same attempts, watchdog, sandbox, MCP servers, artifacts and
// result. It returns the session's result, whose secrets are masked. The error is for
// a session that cannot start at all: the sandbox level it needs is unavailable
// (ErrSandbox), or there are no providers.
func (r *Runner) RunSession(ctx context.Context, s jobs.Session, dir string, so SessionOptions) (*protocol.Result, error) {
	if r.opts.Providers == nil {
		return nil, errors.New("run session: no providers")
	}
	if err := r.checkSandbox([]jobs.Session{s}); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("run session: %w", err)
	}
	// No tool may see the artifacts of the session or of its neighbours.
	st := r.newRunState(&jobs.Spec{}, &Plan{Run: []jobs.Session{s}, Concurrency: 1}, io.Discard, filepath.Dir(abs))
	st.one = so
	if r.opts.Resolve != nil {
		if info, err := r.opts.Resolve(s); err == nil {
			st.resolved = map[string]ProviderInfo{s.Key: info}
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	st.cancelRun = cancel
	st.progress = newProgress(r.opts, 1, 1, r.opts.Now)
	res := st.runSession(ctx, s, abs)
	st.progress.finished(res)
	return res, nil
}

// ExitCode is the exit code of a run of the one session whose result is res, as
// Summary.ExitCode gives it for a run of a spec.
func ExitCode(res *protocol.Result, interrupted bool) int {
	s := &Summary{Sessions: []Row{rowOf(res, false)}}
	s.total()
	return s.ExitCode(interrupted)
}

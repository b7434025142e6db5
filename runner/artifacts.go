package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// The files of the output folder.
const (
	RunFile        = "run.json"
	SummaryFile    = "summary.json"
	SummaryMDFile  = "summary.md"
	JUnitFile      = "junit.xml"
	RunLogFile     = "run.log"
	SessionsDir    = "sessions"
	WorkspacesDir  = "workspaces"
	StreamFile     = "stream.jsonl"
	EventsFile     = agent.EventsFile
	TranscriptFile = "transcript.txt"
	MessagesFile   = agent.MessagesFile
	ResultFile     = "result.json"
	PatchFile      = "changes.patch"
)

// artifacts are the sinks of one session attempt: stream.jsonl, events.jsonl,
// transcript.txt, the run's log and stdout, behind one redactor.
type artifacts struct {
	chain    sink.Sink
	redactor *sink.Redactor
	files    []*os.File
	full     func() // the disk guard's Stop, told of a write that found the disk full
}

// resultRoom is the room reserved for a session's result.json in its folder: a result
// is a few KiB, more with a long final answer or structured output; reportRoom that of
// each of the run's reports, whose inode matters most (the run's reserve holds the
// bytes of the larger ones).
const (
	resultRoom = 16 << 10
	reportRoom = 64 << 10
)

// openArtifacts creates the session's files in dir and the sinks that write them.
func (st *runState) openArtifacts(s jobs.Session, dir, sessionID string, files *sink.Files) (*artifacts, error) {
	a := &artifacts{full: st.disk.Stop}
	flag := os.O_TRUNC
	if st.one.Persistent {
		flag = os.O_APPEND // the folder keeps the session's earlier runs
	}
	create := func(name string) (*os.File, error) {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|flag, 0o644)
		if err != nil {
			return nil, err
		}
		a.files = append(a.files, f)
		return f, nil
	}
	stream, err := create(StreamFile)
	if err != nil {
		return nil, a.abort(err)
	}
	transcript, err := create(TranscriptFile)
	if err != nil {
		return nil, a.abort(err)
	}
	events, err := sink.OpenEvents(filepath.Join(dir, EventsFile), st.r.opts.Now)
	if err != nil {
		return nil, a.abort(err)
	}
	events.DeferSync() // the run syncs its folder once, when its sessions have ended (syncOut)
	if st.disk != nil {
		// The result's own room, which a tool that fills the disk before the session
		// ends cannot take, as it can take a part of the run's reserve once the guard
		// gives one up. Where the disk has none left already, the reserve serves.
		_ = sink.ReserveFile(filepath.Join(dir, ResultFile), resultRoom)
	}
	o := st.r.opts
	prefix := "[" + s.Key + "] "
	// One text rendering feeds transcript.txt and, each line prefixed with the key,
	// run.log (and stdout when it shows the same plain text).
	text := []io.Writer{transcript, &prefixed{w: st.runLog, prefix: prefix}}
	sinks := []sink.Sink{sink.NewStreamJSON(stream, protocol.Envelope{}), events}
	onStdout := false // the text transcript goes to stdout
	switch {
	case st.one.Stdout != nil:
		out, err := st.one.Stdout()
		if err != nil {
			return nil, a.abort(err)
		}
		sinks = append(sinks, out)
	case o.Format != sink.FormatText:
		// Every session's lines, stream-json's with its ids.
		out, err := sink.ForFormat(o.Format, st.stdout, sink.FormatOptions{
			Envelope: protocol.Envelope{SessionID: sessionID, JobID: s.JobID}, Version: o.Version})
		if err != nil {
			return nil, a.abort(err)
		}
		sinks = append(sinks, out)
	case o.GitHub != nil:
		// In an Actions log each session is one collapsible group, written when it ends.
		sinks = append(sinks, o.GitHub.sessionLog(s.Key, st.spec.File(), st.lines[s.JobID]))
	case o.Stdout == io.Discard:
		// Nothing reads stdout: rendering for it would only cost time.
	case o.StdoutColor:
		sinks = append(sinks, sink.NewText(st.stdout, sink.TextOptions{Prefix: prefix, Color: true}))
		onStdout = true
	default:
		text = append(text, &prefixed{w: st.stdout, prefix: prefix})
		onStdout = true
	}
	if w := st.progress.watch(s.Key, onStdout && o.StdoutShared); w != nil {
		sinks = append(sinks, w)
	}
	sinks = append(sinks, sink.NewText(io.MultiWriter(text...), sink.TextOptions{}))
	a.redactor = files.Sink(sink.Multi(sinks...))
	a.chain = sink.NewLocked(a.redactor) // the agent, and the proxy's violations
	return a, nil
}

// abort closes what was opened and returns err.
func (a *artifacts) abort(err error) error {
	for _, f := range a.files {
		_ = f.Close() // err is what went wrong; the artifacts are abandoned
	}
	return err
}

// Write sends m to every sink. A write that finds the disk full stops the run, whose
// cause the session's status then names (diskGuard).
func (a *artifacts) Write(m protocol.Message) error {
	err := a.chain.Write(m)
	if sink.DiskFull(err) && a.full != nil {
		a.full()
	}
	return err
}

// writeResult writes the result event.
func (a *artifacts) writeResult(res *protocol.Result) error {
	r := *res
	return a.Write(protocol.Message{Kind: protocol.KindResult, Final: &r})
}

// close flushes and closes every sink and file; the first error wins.
func (a *artifacts) close() error {
	err := a.chain.Close()
	for _, f := range a.files {
		err = errors.Join(err, f.Close())
	}
	return err
}

// failedToStart records a session whose folder could not even be prepared. One that
// failed on the full disk of the output folder stops the run, and is cancelled by it as
// the sessions that were running are.
func (st *runState) failedToStart(s jobs.Session, dir string, attempt int, err error) *protocol.Result {
	files := st.filesFor(s)
	res := st.newResult(s, attempt)
	res.Status, res.IsError = protocol.StatusCrashed, true
	res.Error = &protocol.Error{Kind: protocol.ErrInternal, Message: "prepare session folder: " + err.Error()}
	if sink.DiskFull(err) && st.disk != nil {
		res.Status, res.Error = protocol.StatusCancelled, st.disk.cancelled()
	}
	res.Result = res.Error.Message
	res = files.Redactor().RedactResult(res)
	if werr := files.WriteJSONUnsynced(filepath.Join(dir, ResultFile), res); werr != nil {
		st.r.log.Error("write result.json", zapKey(s.Key), zapErr(werr))
	}
	return res
}

// notStarted records a session the run never started because it was interrupted or out
// of budget: its folder still gets a session_start, a result event and result.json.
func (st *runState) notStarted(ctx context.Context, s jobs.Session) *protocol.Result {
	status, perr := cancelStatus(ctx)
	return st.skip(s, status, perr)
}

// refusedBudget records a session the run-level budget did not admit.
func (st *runState) refusedBudget(s jobs.Session) *protocol.Result {
	return st.skip(s, protocol.StatusBudget, &protocol.Error{Kind: protocol.ErrBudget,
		Message: "not started: the run-level budget would be exceeded"})
}

func (st *runState) skip(s jobs.Session, status protocol.Status, perr *protocol.Error) *protocol.Result {
	dir := st.dirOf(s)
	if err := resetDir(dir); err != nil {
		return st.failedToStart(s, dir, 0, err)
	}
	start := st.r.opts.Now()
	res := st.newResult(s, 0)
	res.Status, res.Error, res.Result = status, perr, perr.Message
	st.progress.started(s.Key, false)
	files := st.filesFor(s)
	arts, err := st.openArtifacts(s, dir, res.SessionID, files)
	if err != nil {
		return st.finish(nil, files, dir, res, start)
	}
	st.writeStart(arts, dir, s, res, start)
	return st.finish(arts, files, dir, res, start)
}

// writeStart writes the session_start event of a session whose agent never wrote one
// (it was not started, or failed before it started), so every stream opens the same way,
// and creates the empty conversation file the agent would have written.
func (st *runState) writeStart(arts *artifacts, dir string, s jobs.Session, res *protocol.Result, start time.Time) {
	if err := touch(filepath.Join(dir, MessagesFile)); err != nil {
		st.r.log.Error("create messages.jsonl", zapKey(s.Key), zapErr(err))
	}
	if err := arts.Write(protocol.Message{Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{
		SessionID: res.SessionID, JobID: s.JobID, Provenance: res.Provenance,
		Cwd: s.Settings.Workspace.Dir, Tools: []string{}, TS: start.UTC().Format(protocol.TimeFormat)}}); err != nil {
		st.r.log.Error("write session_start", zapKey(s.Key), zapErr(err))
	}
}

// resolve is the provider and model s will use as far as the run knows before its
// provider is built: what Options.Resolve said, else what the spec says.
func (st *runState) resolve(s jobs.Session) ProviderInfo {
	if info, ok := st.resolved[s.Key]; ok {
		return info
	}
	return ProviderInfo{Name: string(s.Settings.Provider), Model: s.Settings.Model}
}

// newResult is the result of s before it runs: who it is and what produced it.
// attempt is 0 for a session that never started.
func (st *runState) newResult(s jobs.Session, attempt int) *protocol.Result {
	id := st.one.SessionID
	if id == "" {
		id = st.r.opts.NewID()
	}
	res := &protocol.Result{SessionID: id, JobID: s.JobID, Key: s.Key, SpecDigest: s.Digest,
		Attempts: attempt, Checks: []protocol.Check{}, TotalCostUSD: noCost(),
		Provenance: st.provenance(s, st.resolve(s), attempt)}
	if attempt > 0 {
		res.Retries = attempt - 1
	}
	return res
}

// prefixed writes whole lines to w, each with prefix before it, in one Write call per
// call, so that sessions sharing w never interleave inside a line.
type prefixed struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixed) Write(b []byte) (int, error) {
	n := len(b)
	p.buf = p.buf[:0]
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i+1]
		}
		p.buf = append(p.buf, p.prefix...)
		p.buf = append(p.buf, line...)
		b = b[len(line):]
	}
	if _, err := p.w.Write(p.buf); err != nil {
		return 0, err
	}
	return n, nil
}

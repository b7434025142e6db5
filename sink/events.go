package sink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// Events appends to a session's events.jsonl: every message as one JSON line with seq
// and ts added, written with one write call, so each line reaches the kernel whole as
// soon as it happens; Close fsyncs, unless DeferSync was called. It is safe for
// concurrent use.
//
// A failed write is sticky: the partial line is cut off so the file keeps whole lines
// only, and every later Write, and Close, return the error.
type Events struct {
	mu     sync.Mutex
	f      *os.File
	now    func() time.Time
	seq    int64
	size   int64 // bytes of whole lines in the file
	buf    []byte
	err    error
	closed bool
	// deferSync leaves the sync at Close to the caller.
	deferSync bool
}

// OpenEvents opens (or creates) the events file at path for appending. When the file
// ends in a torn line, left by a crash, it is cut back to its last newline first; seq
// continues after the last seq in the file, so a resumed session keeps counting. now
// stamps every line (in UTC); nil means time.Now.
func OpenEvents(path string, now func() time.Time) (*Events, error) {
	if now == nil {
		now = time.Now
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open events: %w", err)
	}
	size, seq, err := recoverEvents(f)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open events %s: %w", path, err), f.Close())
	}
	return &Events{f: f, now: now, seq: seq, size: size}, nil
}

// Write appends the line of m with the next seq.
func (e *Events) Write(m protocol.Message) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return ErrClosed
	case e.err != nil:
		return e.err
	}
	line, err := protocol.AppendEvent(reuse(e.buf), m, protocol.Envelope{Seq: e.seq + 1, TS: e.now().UTC()})
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	e.buf = append(line, '\n')
	n, err := e.f.Write(e.buf)
	if err != nil {
		e.err = fmt.Errorf("write events: %w", err)
		if n > 0 {
			e.err = errors.Join(e.err, cutTorn(e.f, n))
		}
		return e.err
	}
	e.size += int64(n)
	e.seq++
	return nil
}

// DeferSync makes Close skip its fsync: the caller makes the file durable with the rest
// of its folder in one sync (the runner, once its sessions have ended), instead of one
// journal commit per file. A process that dies loses nothing either way (the kernel
// holds what was written); only a crash of the machine before that sync can.
func (e *Events) DeferSync() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.deferSync = true
}

// Close fsyncs (unless DeferSync was called) and closes the file. It returns the sticky write error, if any, joined
// with failures of its own. Later writes fail with ErrClosed.
func (e *Events) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	errs := []error{e.err}
	if !e.deferSync {
		if err := e.f.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("sync events: %w", err))
		}
	}
	if err := e.f.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close events: %w", err))
	}
	return errors.Join(errs...)
}

// recoverEvents cuts a torn last line off f and returns the size of what remains and
// the last seq in it (0 when there is none). Lines are read backwards from the end, so
// opening a long log costs the length of its last event, not of the file.
func recoverEvents(f *os.File) (size, seq int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	if st.Size() == 0 {
		return 0, 0, nil // a new log: nothing to recover
	}
	back := backScanner{f: f, buf: make([]byte, 0, 32<<10)}
	nl, err := back.prevNewline(st.Size())
	if err != nil {
		return 0, 0, err
	}
	size = nl + 1
	if size < st.Size() {
		if err := f.Truncate(size); err != nil {
			return 0, 0, fmt.Errorf("cut torn line: %w", err)
		}
	}
	for end := nl; end >= 0; {
		start, err := back.prevNewline(end)
		if err != nil {
			return 0, 0, err
		}
		if n := end - start - 1; n > 0 && n <= protocol.DefaultMaxEventLine {
			line := make([]byte, n)
			if _, err := f.ReadAt(line, start+1); err != nil {
				return 0, 0, fmt.Errorf("read events: %w", err)
			}
			var ev struct {
				Seq int64 `json:"seq"`
			}
			if json.Unmarshal(line, &ev) == nil && ev.Seq > 0 {
				return size, ev.Seq, nil
			}
		}
		end = start
	}
	return size, 0, nil
}

// backScanner finds newlines in a file from its end towards its start, reading each
// byte once.
type backScanner struct {
	f   io.ReaderAt
	buf []byte // the bytes of f from off on
	off int64
}

// prevNewline returns the offset of the last '\n' in f before end, or -1.
func (b *backScanner) prevNewline(end int64) (int64, error) {
	for end > 0 {
		if end <= b.off || end > b.off+int64(len(b.buf)) {
			n := min(end, int64(cap(b.buf)))
			b.buf, b.off = b.buf[:n], end-n
			if _, err := b.f.ReadAt(b.buf, b.off); err != nil {
				return 0, fmt.Errorf("read events: %w", err)
			}
		}
		if i := bytes.LastIndexByte(b.buf[:end-b.off], '\n'); i >= 0 {
			return b.off + int64(i), nil
		}
		end = b.off
	}
	return -1, nil
}

// Package sink writes a session's messages to their destinations (stream-json lines, the
// events.jsonl log, plain-text logs and RESP frames), each line or frame in one Write
// call and flushed as it is written, with fan-out and secret redaction in front; every
// sink is safe for concurrent use, and a failed write is an error, never dropped.
package sink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/agentrun/agentrun/protocol"
)

// Sink receives the messages of a session in order.
type Sink interface {
	// Write writes one message. An error means it did not reach its destination.
	Write(m protocol.Message) error
	// Close flushes what is pending and releases what the sink owns; it reports a
	// write that failed. Writes after Close fail with ErrClosed.
	Close() error
}

// ErrClosed is returned by a sink's Write after its Close.
var ErrClosed = errors.New("sink closed")

// flush pushes out what w buffers: it calls Flush when w has one, and Sync when w has
// one and is not an *os.File. Writes to an *os.File already reach the kernel; an fsync
// per line would cost milliseconds, and stdout pipes and terminals reject it.
func flush(w io.Writer) error {
	switch f := w.(type) {
	case interface{ Flush() error }:
		return f.Flush()
	case interface{ Flush() }:
		f.Flush()
		return nil
	case *os.File:
		return nil
	case interface{ Sync() error }:
		return f.Sync()
	}
	return nil
}

// writeLines writes p with one Write call and flushes w; what names the output in
// errors.
func writeLines(w io.Writer, p []byte, what string) error {
	if n, err := w.Write(p); err != nil {
		if n > 0 {
			err = errors.Join(err, cutTorn(w, n))
		}
		return fmt.Errorf("write %s: %w", what, err)
	}
	if err := flush(w); err != nil {
		return fmt.Errorf("flush %s: %w", what, err)
	}
	return nil
}

// cutTorn takes back the n bytes that a failed write (a full disk) left at the end of
// w, when w is a regular file, so that the file keeps whole lines and the next write
// goes where they began.
func cutTorn(w io.Writer, n int) error {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	end, err := f.Seek(0, io.SeekCurrent)
	if err == nil {
		err = f.Truncate(end - int64(n))
	}
	if err == nil {
		_, err = f.Seek(end-int64(n), io.SeekStart)
	}
	if err != nil {
		return fmt.Errorf("cut torn line: %w", err)
	}
	return nil
}

// maxKeep is the largest line buffer a sink keeps between writes; a larger one, left by
// a huge message, is dropped rather than held for the rest of the session.
const maxKeep = 1 << 20

func reuse(buf []byte) []byte {
	if cap(buf) > maxKeep {
		return nil
	}
	return buf[:0]
}

// SyncWriter serializes the Write calls of several goroutines on one io.Writer, so that
// the sinks of many sessions can share stdout: each Write reaches w whole, never
// interleaved with another.
type SyncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewSyncWriter returns a writer that serializes writes to w.
func NewSyncWriter(w io.Writer) *SyncWriter { return &SyncWriter{w: w} }

// Write writes p to the underlying writer while holding the lock.
func (s *SyncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Flush flushes the underlying writer, as the sinks do after every line, while holding
// the lock.
func (s *SyncWriter) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return flush(s.w)
}

package sink

import (
	"fmt"
	"io"
	"sync"

	"github.com/agentrun/agentrun/protocol"
)

// StreamJSON writes stream-json: one JSON event per line (protocol.AppendEvent and a
// newline), each line in one Write call and flushed. It is safe for concurrent use. It
// does not close its writer.
type StreamJSON struct {
	mu     sync.Mutex
	w      io.Writer
	env    protocol.Envelope
	buf    []byte
	closed bool
}

// NewStreamJSON returns a sink writing stream-json to w. The SessionID and JobID of env
// are added to every line, so that the sessions of a run can share one stdout; a zero
// Envelope adds nothing. Seq and TS belong to events.jsonl and are ignored here.
func NewStreamJSON(w io.Writer, env protocol.Envelope) *StreamJSON {
	return &StreamJSON{w: w, env: protocol.Envelope{SessionID: env.SessionID, JobID: env.JobID}}
}

// Write writes the line of m.
func (s *StreamJSON) Write(m protocol.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	line, err := protocol.AppendEvent(reuse(s.buf), m, s.env)
	if err != nil {
		return fmt.Errorf("stream-json: %w", err)
	}
	s.buf = append(line, '\n')
	return writeLines(s.w, s.buf, "stream-json")
}

// Close flushes the writer. Later writes fail with ErrClosed.
func (s *StreamJSON) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := flush(s.w); err != nil {
		return fmt.Errorf("flush stream-json: %w", err)
	}
	return nil
}

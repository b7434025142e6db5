package sink

import (
	"fmt"
	"io"
	"sync"

	"github.com/agentrun/agentrun/protocol"
)

// RESP writes the seed's length-prefixed frames (protocol.AppendRESP), each frame in one
// Write call and flushed. It is safe for concurrent use. It does not close its writer.
type RESP struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	closed bool
}

// NewRESP returns a sink writing RESP frames to w.
func NewRESP(w io.Writer) *RESP { return &RESP{w: w} }

// Write writes the frame of m.
func (r *RESP) Write(m protocol.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	frame, err := protocol.AppendRESP(reuse(r.buf), m)
	if err != nil {
		return fmt.Errorf("resp: %w", err)
	}
	r.buf = frame
	return writeLines(r.w, frame, "frame")
}

// Close flushes the writer. Later writes fail with ErrClosed.
func (r *RESP) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if err := flush(r.w); err != nil {
		return fmt.Errorf("flush frames: %w", err)
	}
	return nil
}

package sink

import (
	"sync"

	"github.com/agentrun/agentrun/protocol"
)

// Locked serialises Write and Close of a sink that hears from more than one goroutine:
// the session's agent, and the sandbox's proxy reporting a refused connection.
type Locked struct {
	mu   sync.Mutex
	next Sink
}

// NewLocked returns a sink that passes every call to next, one at a time.
func NewLocked(next Sink) *Locked { return &Locked{next: next} }

// Write passes m on.
func (l *Locked) Write(m protocol.Message) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next.Write(m)
}

// Close closes next.
func (l *Locked) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next.Close()
}

package sink

import (
	"errors"
	"fmt"

	"github.com/agentrun/agentrun/protocol"
)

// Fanout writes every message to several sinks. A sink that fails does not stop the
// others: every failure is reported, joined. It is as safe for concurrent use as the
// sinks it holds.
type Fanout struct {
	sinks []Sink
}

// Multi returns a sink that writes to each of sinks, in order.
func Multi(sinks ...Sink) *Fanout {
	return &Fanout{sinks: append([]Sink(nil), sinks...)}
}

// Write writes m to every sink and returns errors.Join of their failures, each naming
// the sink by position and type.
func (f *Fanout) Write(m protocol.Message) error {
	var errs []error
	for i, s := range f.sinks {
		if err := s.Write(m); err != nil {
			errs = append(errs, fmt.Errorf("sink %d (%T): %w", i, s, err))
		}
	}
	return errors.Join(errs...)
}

// Close closes every sink and returns errors.Join of their failures.
func (f *Fanout) Close() error {
	var errs []error
	for i, s := range f.sinks {
		if err := s.Close(); err != nil {
			errs = append(errs, fmt.Errorf("sink %d (%T): %w", i, s, err))
		}
	}
	return errors.Join(errs...)
}

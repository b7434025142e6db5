package protocol

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends, whichever comes first; it returns ctx.Err() when
// ctx ended first (or had already), else nil. A d of zero or less does not wait. It is
// the one wait for a backoff, a pacing delay or a retry's pause.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

package transport

import (
	"context"
	"sync"
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// Limiter is the shared backpressure of one provider endpoint. When any client sharing
// it meets a rate limit or an overload, every client waits out the same pause before
// its next request instead of hammering the endpoint on its own. A nil *Limiter never
// waits. It is safe for concurrent use.
type Limiter struct {
	now func() time.Time

	mu        sync.Mutex
	until     time.Time     // no request starts before this
	throttled time.Duration // total length of the pause windows, overlaps counted once
	pauses    int
}

// NewLimiter returns a limiter using the clock now (nil means time.Now).
func NewLimiter(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now}
}

// Pause holds back new requests for d from now, extending a pause already running.
func (l *Limiter) Pause(d time.Duration) {
	if l == nil || d <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	end := now.Add(d)
	if !end.After(l.until) {
		return
	}
	start := now
	if l.until.After(now) {
		start = l.until
	}
	l.throttled += end.Sub(start)
	l.until = end
	l.pauses++
}

// Wait blocks until no pause is running or ctx ends. Each wait is announced first
// (protocol.NoticeWait): waiting out a pause is never a silent session.
func (l *Limiter) Wait(ctx context.Context) error {
	if l == nil {
		return ctx.Err()
	}
	for {
		l.mu.Lock()
		d := l.until.Sub(l.now())
		l.mu.Unlock()
		if d <= 0 {
			return ctx.Err()
		}
		protocol.NoticeWait(ctx, d)
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

// Throttled returns how long the endpoint has been paused in total, and how many
// times a pause was started or extended.
func (l *Limiter) Throttled() (time.Duration, int) {
	if l == nil {
		return 0, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.throttled, l.pauses
}

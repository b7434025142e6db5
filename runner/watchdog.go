package runner

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
)

// watchdog cancels a session that shows no activity for the idle timeout. Activity is
// bytes from the model, tool output, a message the agent has finished handling, or a
// retry backoff the transport announced.
type watchdog struct {
	idle     time.Duration
	now      func() time.Time
	last     atomic.Int64 // UnixNano from which silence counts; may lie in the future
	done     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

func newWatchdog(idle time.Duration, now func() time.Time, fire func()) *watchdog {
	w := &watchdog{idle: idle, now: now, done: make(chan struct{})}
	w.touch()
	if idle <= 0 {
		return w
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTimer(idle)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
				quiet := w.now().Sub(time.Unix(0, w.last.Load()))
				if quiet >= w.idle {
					fire()
					return
				}
				t.Reset(w.idle - quiet)
			}
		}
	}()
	return w
}

// Liveness is what the transport of a session attempt needs to keep the session alive:
// the runner makes it next to the session's watchdog, and Providers pass it on.
type Liveness struct {
	// Idle bounds the silence of one request attempt, after which the transport gives
	// up on it and retries; 0 sets no bound.
	Idle time.Duration
	// Activity must be called whenever bytes arrive from the model.
	Activity func()
}

// liveness is the attempt bound and the activity callback of the watchdog's session.
//
// A stall is always retried before the session is called inactive: the attempt bound
// is half the session's idle timeout. With the whole timeout, the watchdog, armed by
// the same bytes, would always fire first and end the session instead of letting the
// request be retried once; the other half is margin for a loaded machine (the watchdog
// also waits out each announced backoff, see watched).
func (w *watchdog) liveness() Liveness {
	return Liveness{Idle: w.idle / 2, Activity: w.touch}
}

// touch records activity now.
func (w *watchdog) touch() { w.hold(0) }

// hold records activity and lets silence count only once d has passed: the backoff
// before a retry is the transport waiting on purpose, not a silent session.
func (w *watchdog) hold(d time.Duration) {
	t := w.now().Add(d).UnixNano()
	for {
		last := w.last.Load()
		if last >= t || w.last.CompareAndSwap(last, t) {
			return
		}
	}
}

// stop ends the watchdog and waits for it; it may be called more than once.
func (w *watchdog) stop() {
	w.stopOnce.Do(func() { close(w.done) })
	w.wg.Wait()
}

// watched is a provider whose stream keeps a session's watchdog informed. Time the agent
// spends handling a message (writing its artifacts) is not the model's silence: the
// watchdog is touched again once the agent has taken the message, so the transport's
// own idle timer, armed at its next read, always runs out first on a stalled stream and
// the attempt is retried. A retry holds the watchdog for its announced backoff.
type watched struct {
	agent.Provider
	watch *watchdog
}

// Stream yields the provider's messages, informing the watchdog; the provider
// announces its waits on a shared limiter through the context
// (protocol.WithWaitNotice), and they hold the watchdog too. An error that comes
// because the session's context ended says why it ended, as the result will.
func (p watched) Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
	return func(yield func(protocol.Message) bool) {
		for m := range p.Provider.Stream(protocol.WithWaitNotice(ctx, p.watch.hold), req) {
			switch {
			case m.Kind == protocol.KindRetry:
				p.watch.hold(time.Duration(m.DelayMS) * time.Millisecond)
			case m.Kind == protocol.KindError && ctx.Err() != nil:
				_, e := cancelStatus(ctx)
				m.Err = *e
			}
			if !yield(m) {
				return
			}
			p.watch.touch()
		}
	}
}

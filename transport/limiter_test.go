package transport_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/transport"
)

// acquire takes a slot that must be granted.
func acquire(t *testing.T, l *transport.Limiter, tokens int64) *transport.Slot {
	t.Helper()
	s, err := l.Acquire(context.Background(), tokens)
	require.NoError(t, err)
	return s
}

func TestLimiterPauseUnion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := transport.NewLimiter(nil)
		l.Pause(time.Second)
		l.Pause(500 * time.Millisecond) // inside the running pause: no change
		throttled, pauses := l.Throttled()
		assert.Equal(t, time.Second, throttled)
		assert.Equal(t, 1, pauses)

		time.Sleep(500 * time.Millisecond)
		l.Pause(time.Second) // overlaps: extends to 1.5 s, counts only the new half second
		throttled, pauses = l.Throttled()
		assert.Equal(t, 1500*time.Millisecond, throttled)
		assert.Equal(t, 2, pauses)

		start := time.Now()
		acquire(t, l, 0).End(transport.Succeeded)
		assert.Equal(t, time.Second, time.Since(start), "waits until the end of the extended pause")

		time.Sleep(2 * time.Second)
		l.Pause(time.Second) // after a gap: the gap is not throttled time
		throttled, pauses = l.Throttled()
		assert.Equal(t, 2500*time.Millisecond, throttled)
		assert.Equal(t, 3, pauses)

		l.Pause(0)
		l.Pause(-time.Second)
		throttled, pauses = l.Throttled()
		assert.Equal(t, 2500*time.Millisecond, throttled, "zero and negative pauses change nothing")
		assert.Equal(t, 3, pauses)
		assert.Zero(t, l.Paced(), "a pause is throttled time, not paced time")
	})
}

func TestLimiterWaitersShareThePause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := transport.NewLimiter(nil)
		start := time.Now()
		l.Pause(30 * time.Second)
		var wg sync.WaitGroup
		var waited [3]time.Duration
		for i := range waited {
			wg.Go(func() {
				acquire(t, l, 0).End(transport.Succeeded)
				waited[i] = time.Since(start)
			})
		}
		wg.Wait()
		for i, w := range waited {
			assert.Equal(t, 30*time.Second, w, "waiter %d", i)
		}
	})
}

func TestLimiterAcquireCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := transport.NewLimiter(nil)
		l.Pause(time.Minute)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		s, err := l.Acquire(ctx, 0)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Nil(t, s)
		assert.Equal(t, 10*time.Second, time.Since(start))

		// The cancelled waiter left the queue: the next one is not stuck behind it.
		time.Sleep(time.Minute)
		acquire(t, l, 0).End(transport.Succeeded)
		assert.Equal(t, 70*time.Second, time.Since(start))
	})
}

func TestLimiterNil(t *testing.T) {
	var l *transport.Limiter
	l.Pause(time.Hour)
	s, err := l.Acquire(context.Background(), 100)
	assert.NoError(t, err)
	s.Observe(http.Header{"Anthropic-Ratelimit-Requests-Limit": {"1"}, "Anthropic-Ratelimit-Requests-Remaining": {"0"}})
	s.End(transport.RateLimited)
	throttled, pauses := l.Throttled()
	assert.Zero(t, throttled)
	assert.Zero(t, pauses)
	assert.Zero(t, l.Paced())
	assert.Zero(t, l.Window())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = l.Acquire(ctx, 0)
	assert.ErrorIs(t, err, context.Canceled)
}

// TestLimiterAIMD plays a scripted pattern of rate limits and successes and checks the
// in-flight limit after each step: unbounded until the first rate limit, halved once
// per round of requests, grown back by one per success up to half the largest window
// cut (slow start) and by one per window of successes above it, never below one, and
// holding requests back while full.
func TestLimiterAIMD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := transport.NewLimiter(nil)
		take := func(n int) []*transport.Slot {
			var out []*transport.Slot
			for range n {
				out = append(out, acquire(t, l, 0))
			}
			return out
		}
		end := func(o transport.Outcome, slots ...*transport.Slot) {
			for _, s := range slots {
				s.End(o)
			}
		}
		first := take(8) // no limit yet: all eight at once
		assert.Zero(t, l.Window())

		// A burst of three 429s: one round, one cut, to half of the eight in flight.
		end(transport.RateLimited, first[:3]...)
		assert.Equal(t, 4.0, l.Window())
		// Requests admitted before the window existed never filled it: no growth.
		end(transport.Succeeded, first[3:]...)
		assert.Equal(t, 4.0, l.Window())

		// A round that fills the window of four grows it by about one (1/4 + 1/4.25 + …).
		round := take(4)
		end(transport.Succeeded, round...)
		want := 4.0
		for range 4 {
			want += 1 / want
		}
		assert.InDelta(t, want, l.Window(), 1e-9)

		// Full, the window holds a fifth request back until one ends.
		round = take(4)
		fifth := make(chan *transport.Slot)
		go func() { fifth <- acquire(t, l, 0) }()
		synctest.Wait()
		select {
		case <-fifth:
			t.Fatal("a fifth request started past the limit")
		default:
		}
		time.Sleep(3 * time.Second)
		end(transport.Unjudged, round[0]) // neither grows nor cuts
		s5 := <-fifth
		assert.InDelta(t, want, l.Window(), 1e-9)
		assert.Equal(t, 3*time.Second, l.Paced(), "the fifth was held by the window for 3 s")

		// A 429 of a request admitted after the last cut is a new round: cut again; one
		// admitted before that cut is not.
		end(transport.RateLimited, s5)
		assert.InDelta(t, want/2, l.Window(), 1e-9)
		end(transport.RateLimited, round[1])
		assert.InDelta(t, want/2, l.Window(), 1e-9)
		end(transport.Unjudged, round[2:]...)

		// A storm of rounds brings it down to one, never to zero.
		for range 5 {
			end(transport.RateLimited, take(1)...)
		}
		assert.Equal(t, 1.0, l.Window())

		// Then it grows by one per success back to half the largest window cut (the eight
		// in flight at the first 429), and by about one per window of successes above it;
		// a round that does not fill the window does not grow it.
		end(transport.Succeeded, take(1)...)
		assert.Equal(t, 2.0, l.Window())
		end(transport.Succeeded, take(2)...)
		assert.Equal(t, 4.0, l.Window(), "slow start stops at the threshold")
		end(transport.Succeeded, take(2)...)
		assert.Equal(t, 4.0, l.Window(), "two in flight of four")
		end(transport.Succeeded, take(4)...)
		assert.InDelta(t, want, l.Window(), 1e-9)
	})
}

// TestLimiterNested checks that a sub-agent's request is admitted while its parent's
// holds the only slot the window allows, ahead of the requests queued behind it: with
// the window cut to one, the two would otherwise wait for each other for ever.
func TestLimiterNested(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := transport.NewLimiter(nil)
		// Two in flight and a 429: the window is cut to one, which the parent fills.
		a, parent := acquire(t, l, 0), acquire(t, l, 0)
		a.End(transport.RateLimited)
		require.Equal(t, 1.0, l.Window())

		queued := make(chan *transport.Slot, 1)
		go func() { queued <- acquire(t, l, 0) }()
		synctest.Wait() // the other session waits for the window
		require.Empty(t, queued)

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		child, err := l.AcquireNested(ctx, 0)
		require.NoError(t, err, "the sub-agent's request is not held back by its parent's slot")
		child.End(transport.Succeeded) // a success: the window grows, and the other goes
		(<-queued).End(transport.Succeeded)
		parent.End(transport.Succeeded)
	})
}

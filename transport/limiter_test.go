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

// TestLimiterAIMD plays a scripted pattern of outcomes and checks the in-flight limit
// after each step: unbounded until the first rate limit, halved once per round of
// requests, grown by one per window of successes while it binds, and binding.
func TestLimiterAIMD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := transport.NewLimiter(nil)
		var slots []*transport.Slot
		for range 8 {
			slots = append(slots, acquire(t, l, 0)) // no limit yet: all eight at once
		}
		assert.Zero(t, l.Window())

		// A burst of three 429s: one round, one cut, to half of the eight in flight.
		for _, s := range slots[:3] {
			s.End(transport.RateLimited)
		}
		assert.Equal(t, 4.0, l.Window())

		// Five successes: the limit binds (5 and then 4 in flight for a limit of 4) on
		// the first two, which grow it by a quarter and then by 1/4.25.
		for _, s := range slots[3:] {
			s.End(transport.Succeeded)
		}
		assert.InDelta(t, 4.25+1/4.25, l.Window(), 1e-9)

		// Now at most four are in flight: the fifth waits until one ends.
		slots = slots[:0]
		for range 4 {
			slots = append(slots, acquire(t, l, 0))
		}
		fifth := make(chan *transport.Slot)
		go func() { fifth <- acquire(t, l, 0) }()
		synctest.Wait()
		select {
		case <-fifth:
			t.Fatal("a fifth request started past the limit")
		default:
		}
		time.Sleep(3 * time.Second)
		slots[0].End(transport.Unjudged) // neither grows nor cuts
		s5 := <-fifth
		assert.InDelta(t, 4.25+1/4.25, l.Window(), 1e-9)
		assert.Equal(t, 3*time.Second, l.Paced(), "the fifth was held by the window for 3 s")

		// A 429 of a request admitted after the last cut is a new round: cut again.
		s5.End(transport.RateLimited)
		assert.InDelta(t, (4.25+1/4.25)/2, l.Window(), 1e-9)
		// One admitted before that cut is not.
		slots[1].End(transport.RateLimited)
		assert.InDelta(t, (4.25+1/4.25)/2, l.Window(), 1e-9)

		// Repeated rounds of rate limits bring it down to one, never to zero.
		slots[2].End(transport.Unjudged)
		slots[3].End(transport.Unjudged)
		for range 5 {
			acquire(t, l, 0).End(transport.RateLimited)
		}
		assert.Equal(t, 1.0, l.Window())
	})
}

package transport_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/transport"
)

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
		assert.NoError(t, l.Wait(context.Background()))
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
				assert.NoError(t, l.Wait(context.Background()))
				waited[i] = time.Since(start)
			})
		}
		wg.Wait()
		for i, w := range waited {
			assert.Equal(t, 30*time.Second, w, "waiter %d", i)
		}
	})
}

func TestLimiterWaitCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := transport.NewLimiter(nil)
		l.Pause(time.Minute)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		assert.ErrorIs(t, l.Wait(ctx), context.DeadlineExceeded)
		assert.Equal(t, 10*time.Second, time.Since(start))
	})
}

func TestLimiterNil(t *testing.T) {
	var l *transport.Limiter
	l.Pause(time.Hour)
	assert.NoError(t, l.Wait(context.Background()))
	throttled, pauses := l.Throttled()
	assert.Zero(t, throttled)
	assert.Zero(t, pauses)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, l.Wait(ctx), context.Canceled)
}

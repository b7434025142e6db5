package runner

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
)

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// streamFunc is a one-method fake of agent.Provider.
type streamFunc func(yield func(protocol.Message) bool)

func (f streamFunc) Stream(context.Context, protocol.Request) iter.Seq[protocol.Message] {
	return iter.Seq[protocol.Message](f)
}

func TestWatchdogHoldIsNeverShortened(t *testing.T) {
	c := &clock{t: time.Unix(1_000, 0)}
	w := newWatchdog(0, c.now, nil) // no timer: only the bookkeeping
	start := c.t
	assert.Equal(t, start.UnixNano(), w.last.Load(), "born active")

	w.hold(2 * time.Second)
	assert.Equal(t, start.Add(2*time.Second).UnixNano(), w.last.Load())

	c.advance(time.Second)
	w.touch()
	assert.Equal(t, start.Add(2*time.Second).UnixNano(), w.last.Load(), "a touch inside the hold keeps it")

	c.advance(3 * time.Second)
	w.touch()
	assert.Equal(t, start.Add(4*time.Second).UnixNano(), w.last.Load())
	w.stop()
}

// TestWatchedCountsHandlingAsActivity shows silence starts when the agent has handled a
// message, not when its bytes arrived, and that a retry holds the watchdog for its
// backoff.
func TestWatchedCountsHandlingAsActivity(t *testing.T) {
	c := &clock{t: time.Unix(1_000, 0)}
	w := newWatchdog(0, c.now, nil)
	defer w.stop()
	msgs := []protocol.Message{
		{Kind: protocol.KindText, Text: "Let me"}, // 0.6 s to handle
		{Kind: protocol.KindRetry, Attempt: 1, DelayMS: 1500, Reason: "error_inactivity: stalled"},
		{Kind: protocol.KindText, Text: "The answer is..."}, // 1.6 s
	}
	p := watched{Provider: streamFunc(func(yield func(protocol.Message) bool) {
		for _, m := range msgs {
			if !yield(m) {
				return
			}
		}
	}), watch: w}

	var got []time.Time
	for m := range p.Stream(context.Background(), protocol.Request{}) {
		got = append(got, time.Unix(0, w.last.Load()))
		if m.Kind == protocol.KindText {
			c.advance(time.Duration(len(m.Text)) * 100 * time.Millisecond) // writing the artifacts took a while
		}
	}
	require.Len(t, got, 3)
	start := time.Unix(1_000, 0)
	assert.Equal(t, start, got[0], "the first message arrives at the start")
	assert.Equal(t, start.Add(600*time.Millisecond+1500*time.Millisecond), got[1],
		"the first message counted once handled; the retry holds the watchdog for its backoff")
	assert.Equal(t, start.Add(600*time.Millisecond+1500*time.Millisecond), got[2], "handling the retry was instant")
	assert.Equal(t, start.Add(2200*time.Millisecond), time.Unix(0, w.last.Load()),
		"the last message counts once handled, after the hold ran out")
}

// TestWatchedStopsWithItsConsumer checks a consumer that stops early stops the stream.
func TestWatchedStopsWithItsConsumer(t *testing.T) {
	w := newWatchdog(0, time.Now, nil)
	defer w.stop()
	yielded := 0
	p := watched{Provider: streamFunc(func(yield func(protocol.Message) bool) {
		for yield(protocol.Message{Kind: protocol.KindText, Text: "x"}) {
			yielded++
		}
	}), watch: w}
	for range p.Stream(context.Background(), protocol.Request{}) {
		break
	}
	assert.Equal(t, 0, yielded, "the provider saw the consumer stop")
}

// TestWatchdogFiresAfterHold checks with the real clock that a held watchdog fires, and
// not before the hold and the idle timeout have both passed.
func TestWatchdogFiresAfterHold(t *testing.T) {
	const idle, held = 20 * time.Millisecond, 80 * time.Millisecond
	fired := make(chan time.Time, 1)
	start := time.Now()
	w := newWatchdog(idle, time.Now, func() { fired <- time.Now() })
	w.hold(held)
	at := <-fired
	w.stop()
	assert.GreaterOrEqual(t, at.Sub(start), idle+held)
}

package runner

import (
	"context"
	"fmt"
	"iter"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/scripted"
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

// TestStallIsRetriedBeforeInactivity streams from a loopback server whose answer
// stalls after its first words, through the real transport set up with the watchdog's
// liveness: the transport gives up on the silent attempt and retries it before the
// session's watchdog calls the session inactive, whether the retry succeeds or the
// stalls go on until the transport's attempts run out.
func TestStallIsRetriedBeforeInactivity(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a stalled stream (not with -short)")
	}
	const idle = time.Second
	tests := map[string]struct {
		times     int
		wantText  string
		wantError bool
	}{
		"stalls once":   {times: 1, wantText: "Let me look."},
		"stalls always": {times: 100, wantError: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			script, err := scripted.ParseScript("stall.yaml", []byte(fmt.Sprintf(
				"steps:\n  - text: Let me look.\n    fault: {stall: true, times: %d}\n  - text: Done.\n", tt.times)))
			require.NoError(t, err)
			srv := httptest.NewServer(scripted.New(scripted.Options{Default: script}).Handler())
			defer srv.Close()
			fired := make(chan struct{})
			w := newWatchdog(idle, time.Now, func() { close(fired) })
			defer w.stop()
			live := w.liveness()
			require.Less(t, live.Idle, idle, "an attempt's silence is bounded below the session's")
			client := transport.NewClient(anthropic.New(anthropic.Config{BaseURL: srv.URL + "/v1",
				Headers: map[string]string{scripted.SessionHeader: name}}),
				transport.Options{MaxAttempts: 2, BaseDelay: 10 * time.Millisecond, Jitter: func() float64 { return 0 },
					IdleTimeout: live.Idle, Activity: live.Activity})
			defer client.CloseIdleConnections()

			var text strings.Builder
			retries := 0
			var failure *protocol.Error
			p := watched{Provider: client, watch: w}
			for m := range p.Stream(t.Context(), protocol.Request{Model: "stall", Messages: []protocol.Turn{protocol.UserText("go")}}) {
				switch m.Kind {
				case protocol.KindText:
					text.WriteString(m.Text)
				case protocol.KindRetry:
					retries++
					assert.Contains(t, m.Reason, protocol.ErrInactivity, "the attempt was given up for its silence")
				case protocol.KindError:
					failure = &m.Err
				default: // the stream's other messages are not the point here
				}
			}
			select {
			case <-fired:
				t.Fatal("the watchdog called the session inactive before the transport retried the stall")
			default:
			}
			assert.Equal(t, tt.wantText, text.String())
			assert.Equal(t, 1, retries)
			if tt.wantError {
				require.NotNil(t, failure)
				assert.Equal(t, protocol.ErrInactivity, failure.Kind, "the transport, not the watchdog, ends it")
			} else {
				assert.Nil(t, failure)
			}
		})
	}
}

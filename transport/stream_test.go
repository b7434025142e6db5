package transport

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/testexit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit)) }

// These tests run Client.Stream in a synctest bubble, so backoff and timeouts take no
// real time. A bubble cannot use the network, so the HTTP round trip is faked at the
// network edge; the loopback tests live with the dialects (transport/anthropic).

const fakeKey = "sk-fake-0123456789abcdef"

// lineDialect is a tiny wire format: each body line "text:…" is a text delta, "stop"
// ends the message. Its decoder wraps read errors, as a careless dialect might.
type lineDialect struct{}

func (lineDialect) NewRequest(ctx context.Context, _ protocol.Request) (*http.Request, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://fake.invalid/v1/messages", http.NoBody)
	if err != nil {
		return nil, err
	}
	r.Header.Set("X-Api-Key", fakeKey)
	return r, nil
}

func (lineDialect) NewDecoder(body io.Reader) Decoder { return &lineDecoder{s: bufio.NewScanner(body)} }

func (lineDialect) ErrorMessage(body []byte) (string, string) {
	typ, msg, ok := strings.Cut(string(body), ":")
	if !ok {
		return "", ""
	}
	return msg, typ
}

type lineDecoder struct {
	s    *bufio.Scanner
	msg  protocol.Message
	done bool
	err  error
}

func (d *lineDecoder) Next() bool {
	if d.done || !d.s.Scan() {
		if !d.done && d.err == nil {
			d.err = &Error{Kind: protocol.ErrStream, Message: "no stop"}
			if err := d.s.Err(); err != nil {
				d.err = &Error{Kind: protocol.ErrStream, Message: "read: " + err.Error()}
			}
		}
		return false
	}
	line := d.s.Text()
	if line == "stop" {
		d.msg, d.done = protocol.Message{Kind: protocol.KindStop, Stop: "end_turn"}, true
		return true
	}
	d.msg = protocol.Message{Kind: protocol.KindText, Text: strings.TrimPrefix(line, "text:")}
	return true
}

func (d *lineDecoder) Message() protocol.Message { return d.msg }
func (d *lineDecoder) Err() error                { return d.err }

// reply is one scripted answer of the fake round trip.
type reply struct {
	status int
	header map[string]string
	body   string
	hang   bool // after body, block until the request is cancelled
	silent bool // send no headers at all; block until the request is cancelled
}

// fakeNet answers requests with replies in order, repeating the last one, and records
// when each request was made.
type fakeNet struct {
	replies []reply
	at      []time.Time
	closed  atomic.Int32
}

func (f *fakeNet) RoundTrip(req *http.Request) (*http.Response, error) {
	r := f.replies[min(len(f.at), len(f.replies)-1)]
	f.at = append(f.at, time.Now())
	if r.silent {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	status := r.status
	if status == 0 {
		status = http.StatusOK
	}
	h := http.Header{}
	for k, v := range r.header {
		h.Set(k, v)
	}
	body := &fakeBody{r: strings.NewReader(r.body), hang: r.hang, ctx: req.Context(), closed: &f.closed}
	return &http.Response{StatusCode: status, Header: h, Body: body, Request: req}, nil
}

type fakeBody struct {
	r      io.Reader
	hang   bool
	ctx    context.Context
	closed *atomic.Int32
}

func (b *fakeBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.hang {
		if n > 0 {
			return n, nil
		}
		<-b.ctx.Done()
		return 0, b.ctx.Err()
	}
	return n, err
}

func (b *fakeBody) Close() error {
	b.closed.Add(1)
	return nil
}

func newFakeClient(net *fakeNet, opts Options) *Client {
	opts.HTTP = &http.Client{Transport: net}
	if opts.Jitter == nil {
		opts.Jitter = func() float64 { return 0 }
	}
	return NewClient(lineDialect{}, opts)
}

func collect(ctx context.Context, c *Client) []protocol.Message {
	var out []protocol.Message
	for m := range c.Stream(ctx, protocol.Request{}) {
		out = append(out, m)
	}
	return out
}

func TestStreamBackoffSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &fakeNet{replies: []reply{{status: 500, body: "api_error:boom"}}}
		c := newFakeClient(net, Options{MaxAttempts: 10, MaxWait: 10 * time.Second})
		start := time.Now()

		got := collect(context.Background(), c)

		// 0.5 + 1 + 2 + 4 = 7.5 s waited; the next 8 s would pass MaxWait.
		var delays []int64
		for _, m := range got[:len(got)-1] {
			require.Equal(t, protocol.KindRetry, m.Kind)
			delays = append(delays, m.DelayMS)
		}
		assert.Equal(t, []int64{500, 1000, 2000, 4000}, delays)
		last := got[len(got)-1]
		assert.Equal(t, protocol.KindError, last.Kind)
		assert.Equal(t, protocol.Error{Kind: protocol.ErrServer, Message: "HTTP 500: boom"}, last.Err)
		var at []time.Duration
		for _, a := range net.at {
			at = append(at, a.Sub(start))
		}
		assert.Equal(t, []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond, 3500 * time.Millisecond, 7500 * time.Millisecond}, at)
		assert.Equal(t, int32(5), net.closed.Load(), "every body closed")
	})
}

func TestStreamIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &fakeNet{replies: []reply{{body: "text:partial\n", hang: true}, {body: "text:whole\nstop\n"}}}
		c := newFakeClient(net, Options{IdleTimeout: 5 * time.Minute, BaseDelay: time.Second})

		got := collect(context.Background(), c)

		require.Len(t, got, 4)
		assert.Equal(t, "partial", got[0].Text)
		assert.Equal(t, protocol.KindRetry, got[1].Kind)
		assert.Equal(t, "inactivity: read stream: no bytes received within the idle timeout", got[1].Reason,
			"classified by the idle timer even though the decoder wrapped the read error")
		assert.Equal(t, "whole", got[2].Text)
		assert.Equal(t, protocol.KindStop, got[3].Kind)
		require.Len(t, net.at, 2)
		assert.Equal(t, 5*time.Minute+time.Second, net.at[1].Sub(net.at[0]), "idle timeout, then the backoff")
	})
}

// TestStreamIdleBeforeHeaders: a server that accepts the request and sends nothing is
// as silent as a stalled body, and is retried after the idle timeout, not the far
// longer header timeout.
func TestStreamIdleBeforeHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &fakeNet{replies: []reply{{silent: true}, {body: "text:whole\nstop\n"}}}
		c := newFakeClient(net, Options{IdleTimeout: 30 * time.Second, HeaderTimeout: time.Hour, BaseDelay: time.Second})

		got := collect(context.Background(), c)

		require.Len(t, got, 3)
		assert.Equal(t, protocol.KindRetry, got[0].Kind)
		assert.Equal(t, "inactivity: send request: no bytes received within the idle timeout", got[0].Reason)
		assert.Equal(t, "whole", got[1].Text)
		require.Len(t, net.at, 2)
		assert.Equal(t, 30*time.Second+time.Second, net.at[1].Sub(net.at[0]), "idle timeout, then the backoff")
	})
}

// TestStreamIdleTimerOnlyWhileReading makes the consumer take longer than the idle
// timeout between messages: time outside Read is not silence.
func TestStreamIdleTimerOnlyWhileReading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &fakeNet{replies: []reply{{body: "text:a\ntext:b\nstop\n"}}}
		c := newFakeClient(net, Options{IdleTimeout: time.Second})
		var got []protocol.Message
		for m := range c.Stream(context.Background(), protocol.Request{}) {
			got = append(got, m)
			time.Sleep(time.Minute) // a long tool run
		}
		require.Len(t, got, 3)
		assert.Equal(t, protocol.KindStop, got[2].Kind)
	})
}

func TestStreamCancelDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &fakeNet{replies: []reply{{status: 503, body: "overloaded_error:busy"}}}
		c := newFakeClient(net, Options{BaseDelay: time.Minute, MaxDelay: time.Minute})
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		var got []protocol.Message
		for m := range c.Stream(ctx, protocol.Request{}) {
			got = append(got, m)
			if m.Kind == protocol.KindRetry {
				cancel(errors.New("job cancelled by the user"))
			}
		}
		require.Len(t, got, 2)
		assert.Equal(t, "overloaded: HTTP 503: busy", got[0].Reason, "503 with overloaded_error is an overload")
		assert.Equal(t, protocol.Error{Kind: protocol.ErrCancelled, Message: "job cancelled by the user"}, got[1].Err)
		assert.Len(t, net.at, 1)
	})
}

func TestStreamDeadlineWhileHanging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &fakeNet{replies: []reply{{body: "text:a\n", hang: true}}}
		c := newFakeClient(net, Options{IdleTimeout: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		got := collect(ctx, c)
		require.Len(t, got, 2)
		assert.Equal(t, protocol.KindError, got[1].Kind)
		assert.Equal(t, protocol.ErrTimeout, got[1].Err.Kind)
		assert.Len(t, net.at, 1, "no retry once the caller's deadline passed")
	})
}

func TestStreamConsumerStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &fakeNet{replies: []reply{{body: "text:a\ntext:b\n", hang: true}}}
		c := newFakeClient(net, Options{})
		for range c.Stream(context.Background(), protocol.Request{}) {
			break
		}
		assert.Equal(t, int32(1), net.closed.Load(), "the body is closed when the consumer stops")
	})
}

func TestStreamSharedLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &fakeNet{replies: []reply{
			{status: 429, header: map[string]string{"Retry-After": "30"}, body: "rate_limit_error:slow down"},
			{body: "text:b\nstop\n"},
			{body: "text:a\nstop\n"},
		}}
		lim := NewLimiter(nil)
		a := newFakeClient(net, Options{Limiter: lim})
		b := newFakeClient(net, Options{Limiter: lim})
		start := time.Now()
		var gotB []protocol.Message
		for m := range a.Stream(context.Background(), protocol.Request{}) {
			if m.Kind == protocol.KindRetry {
				assert.Equal(t, int64(30000), m.DelayMS)
				gotB = collect(context.Background(), b) // b meets the pause a's 429 set
			}
		}
		require.Len(t, gotB, 2)
		require.Len(t, net.at, 3)
		assert.Equal(t, 30*time.Second, net.at[1].Sub(start), "b waited out a's retry-after")
		throttled, pauses := lim.Throttled()
		assert.Equal(t, 30*time.Second, throttled)
		assert.Equal(t, 1, pauses)
	})
}

func TestRedactor(t *testing.T) {
	req, err := http.NewRequest(http.MethodPost, "https://example.invalid/v1?key=url-secret-1&x=1", http.NoBody)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer bearer-secret-2")
	req.Header.Set("X-Api-Key", "api-secret-3")
	r := newRedactor(req)
	e := &Error{Kind: protocol.ErrNetwork, Message: `Post "https://example.invalid/v1?key=url-secret-1": bearer-secret-2 api-secret-3 Bearer bearer-secret-2`}
	got := r.redact(e)
	assert.Equal(t, `Post "https://example.invalid/v1?key=[REDACTED]": [REDACTED] [REDACTED] [REDACTED]`, got.Message)
	assert.Contains(t, e.Message, "url-secret-1", "the original error is not modified")
	clean := &Error{Kind: protocol.ErrNetwork, Message: "nothing secret"}
	assert.Same(t, clean, r.redact(clean))
	assert.Nil(t, r.redact(nil))
}

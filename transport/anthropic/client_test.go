package anthropic_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/transporttest"
)

// testKey is the API key of the fault tests; it must never show in a message.
const testKey = "sk-ant-api03-Zq8kT2vNc7YbL4sDxW9pR3mF"

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "TestDecode", name+".sse"))
	require.NoError(t, err)
	return b
}

// upTo returns a copy of the stream cut just before the n-th occurrence (1-based) of
// marker.
func upTo(t *testing.T, stream []byte, marker string, n int) []byte {
	t.Helper()
	at := 0
	for range n {
		i := bytes.Index(stream[at:], []byte(marker))
		require.GreaterOrEqual(t, i, 0, "marker %q", marker)
		at += i + len(marker)
	}
	return bytes.Clone(stream[:at-len(marker)])
}

func errorBody(typ, msg string) []byte {
	return []byte(`{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"},"request_id":"req_011CTestRequest"}`)
}

func jsonHeader(h map[string]string) map[string]string {
	out := map[string]string{"Content-Type": "application/json"}
	for k, v := range h {
		out[k] = v
	}
	return out
}

// newClient returns a client of srv with fast backoff.
func newClient(t *testing.T, srv *transporttest.Server, opts transport.Options) *transport.Client {
	t.Helper()
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = 3
	}
	opts.BaseDelay, opts.MaxDelay = time.Millisecond, 2*time.Millisecond
	opts.Jitter = func() float64 { return 0 }
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = 10 * time.Second
	}
	c := transport.NewClient(anthropic.New(anthropic.Config{BaseURL: srv.URL + "/v1", APIKey: testKey}), opts)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

var testRequest = protocol.Request{Model: "claude-sonnet-4-5", MaxTokens: 256,
	Messages: []protocol.Turn{protocol.UserText("One line on Go channels")}}

// stream runs one request to its end within a bound and returns every message.
func stream(t *testing.T, c *transport.Client) []protocol.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []protocol.Message
	for m := range c.Stream(ctx, testRequest) {
		out = append(out, m)
	}
	require.NoError(t, ctx.Err(), "the stream ended within its bound")
	return out
}

// assertMessages compares messages; a want KindRetry matches on attempt, delay and the
// start of the reason, a want KindError on kind and the start of the message.
func assertMessages(t *testing.T, want, got []protocol.Message) {
	t.Helper()
	if !assert.Len(t, got, len(want)) {
		for _, m := range got {
			t.Logf("got %s %q %q %+v", m.Kind, m.Text, m.Reason, m.Err)
		}
		return
	}
	for i, w := range want {
		g := got[i]
		switch w.Kind {
		case protocol.KindRetry:
			assert.Equal(t, protocol.KindRetry, g.Kind, "message %d", i)
			assert.Equal(t, w.Attempt, g.Attempt, "message %d attempt", i)
			assert.Equal(t, w.DelayMS, g.DelayMS, "message %d delay", i)
			assert.True(t, strings.HasPrefix(g.Reason, w.Reason), "message %d reason %q starts with %q", i, g.Reason, w.Reason)
		case protocol.KindError:
			assert.Equal(t, protocol.KindError, g.Kind, "message %d", i)
			assert.Equal(t, w.Err.Kind, g.Err.Kind, "message %d error kind", i)
			assert.True(t, strings.HasPrefix(g.Err.Message, w.Err.Message), "message %d error %q starts with %q", i, g.Err.Message, w.Err.Message)
		default:
			assert.Equal(t, w, g, "message %d", i)
		}
	}
}

func retry(attempt int, delayMS int64, reason string) protocol.Message {
	return protocol.Message{Kind: protocol.KindRetry, Attempt: attempt, DelayMS: delayMS, Reason: reason}
}

func failed(kind protocol.ErrorKind, msg string) protocol.Message {
	return protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: kind, Message: msg}}
}

func concat(parts ...[]protocol.Message) []protocol.Message {
	var out []protocol.Message
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestClientFaults(t *testing.T) {
	okBody := fixture(t, "text_only")
	ok := transporttest.Response{Body: okBody}
	success := decodeAll(t, bytes.NewReader(okBody))
	require.Len(t, success, 5)
	firstText := success[:1]
	// The text_only stream cut after its first text delta.
	partial := upTo(t, okBody, "event: content_block_delta", 2)

	bigText := strings.Repeat("Ünïcödé 5 MB line. ", 5<<20/20)
	bigBody := bytes.Replace(okBody, []byte(`"text":"Go channels"`), []byte(`"text":"`+bigText+`"`), 1)
	bigSuccess := append([]protocol.Message{{Kind: protocol.KindText, Text: bigText}}, success[1:]...)

	tests := []struct {
		name         string
		give         []transporttest.Response
		idle         time.Duration
		want         []protocol.Message
		wantRequests int
	}{
		{
			name: "429 with retry-after, then success",
			give: []transporttest.Response{{Status: 429, Header: jsonHeader(map[string]string{"Retry-After": "0.3"}),
				Body: errorBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")}, ok},
			want: concat([]protocol.Message{retry(1, 300,
				"http_429: HTTP 429: rate_limit_error: Number of request tokens has exceeded your per-minute rate limit (request_id req_011CTestRequest)")},
				success),
			wantRequests: 2,
		},
		{
			name:         "529 overloaded is retried",
			give:         []transporttest.Response{{Status: 529, Header: jsonHeader(nil), Body: errorBody("overloaded_error", "Overloaded")}, ok},
			want:         concat([]protocol.Message{retry(1, 1, "overloaded: HTTP 529: overloaded_error: Overloaded")}, success),
			wantRequests: 2,
		},
		{
			name:         "500 then success",
			give:         []transporttest.Response{{Status: 500, Header: jsonHeader(nil), Body: errorBody("api_error", "Internal server error")}, ok},
			want:         concat([]protocol.Message{retry(1, 1, "server: HTTP 500: api_error: Internal server error")}, success),
			wantRequests: 2,
		},
		{
			name:         "401 is auth and not retried",
			give:         []transporttest.Response{{Status: 401, Header: jsonHeader(nil), Body: errorBody("authentication_error", "invalid x-api-key")}, ok},
			want:         []protocol.Message{failed(protocol.ErrAuth, "HTTP 401: authentication_error: invalid x-api-key (request_id req_011CTestRequest)")},
			wantRequests: 1,
		},
		{
			name: "400 is a bad request and not retried",
			give: []transporttest.Response{{Status: 400, Header: jsonHeader(nil),
				Body: errorBody("invalid_request_error", "max_tokens: Field required")}, ok},
			want:         []protocol.Message{failed(protocol.ErrRequest, "HTTP 400: invalid_request_error: max_tokens: Field required")},
			wantRequests: 1,
		},
		{
			name: "x-should-retry false on a 500",
			give: []transporttest.Response{{Status: 500, Header: jsonHeader(map[string]string{"X-Should-Retry": "false"}),
				Body: errorBody("api_error", "Internal server error")}, ok},
			want:         []protocol.Message{failed(protocol.ErrServer, "HTTP 500: api_error: Internal server error")},
			wantRequests: 1,
		},
		{
			name: "x-should-retry true on a 400",
			give: []transporttest.Response{{Status: 400, Header: jsonHeader(map[string]string{"X-Should-Retry": "true"}),
				Body: errorBody("invalid_request_error", "try again")}, ok},
			want:         concat([]protocol.Message{retry(1, 1, "request: HTTP 400: invalid_request_error: try again")}, success),
			wantRequests: 2,
		},
		{
			name: "retry-after-ms",
			give: []transporttest.Response{{Status: 429, Header: jsonHeader(map[string]string{"Retry-After-Ms": "150", "Retry-After": "1"}),
				Body: errorBody("rate_limit_error", "slow down")}, ok},
			want:         concat([]protocol.Message{retry(1, 150, "http_429: HTTP 429: rate_limit_error: slow down")}, success),
			wantRequests: 2,
		},
		{
			name: "retry-after too large gives up",
			give: []transporttest.Response{{Status: 429, Header: jsonHeader(map[string]string{"Retry-After": "3600"}),
				Body: errorBody("rate_limit_error", "daily limit")}, ok},
			want:         []protocol.Message{failed(protocol.ErrRateLimit, "HTTP 429: rate_limit_error: daily limit")},
			wantRequests: 1,
		},
		{
			name: "attempts exhausted",
			give: []transporttest.Response{{Status: 503, Header: jsonHeader(nil), Body: []byte("upstream connect error")}},
			want: []protocol.Message{
				retry(1, 1, "server: HTTP 503: upstream connect error"),
				retry(2, 2, "server: HTTP 503: upstream connect error"),
				failed(protocol.ErrServer, "HTTP 503: upstream connect error"),
			},
			wantRequests: 3,
		},
		{
			name:         "connection cut mid-stream",
			give:         []transporttest.Response{{Body: partial, Cut: true}, ok},
			want:         concat(firstText, []protocol.Message{retry(1, 1, "network: read stream: ")}, success),
			wantRequests: 2,
		},
		{
			name:         "stall longer than the idle timeout",
			give:         []transporttest.Response{{Body: partial, Hang: true}, ok},
			idle:         200 * time.Millisecond,
			want:         concat(firstText, []protocol.Message{retry(1, 1, "inactivity: read stream: no bytes received within the idle timeout")}, success),
			wantRequests: 2,
		},
		{
			name: "malformed JSON in a data line",
			give: []transporttest.Response{{Body: fixture(t, "malformed_json")}, ok},
			want: concat([]protocol.Message{{Kind: protocol.KindText, Text: "before"}},
				[]protocol.Message{retry(1, 1, "stream: malformed content_block_delta event: ")}, success),
			wantRequests: 2,
		},
		{
			name: "EOF without message_stop",
			give: []transporttest.Response{{Body: fixture(t, "eof_without_stop")}, ok},
			want: concat(decodeAll(t, bytes.NewReader(fixture(t, "eof_without_stop")))[:2],
				[]protocol.Message{retry(1, 1, "stream: stream ended without message_stop")}, success),
			wantRequests: 2,
		},
		{
			name: "overloaded error event mid-stream",
			give: []transporttest.Response{{Body: fixture(t, "error_overloaded")}, ok},
			want: concat(decodeAll(t, bytes.NewReader(fixture(t, "error_overloaded")))[:2],
				[]protocol.Message{retry(1, 1, "overloaded: overloaded_error: Overloaded")}, success),
			wantRequests: 2,
		},
		{
			name: "invalid request error event mid-stream is not retried",
			give: []transporttest.Response{{Body: append(upTo(t, okBody, "event: content_block_stop", 1),
				"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n"...)}, ok},
			want: concat(success[:3], []protocol.Message{{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 25, Output: 1}},
				failed(protocol.ErrRequest, "invalid_request_error: bad")}),
			wantRequests: 1,
		},
		{
			name: "cut on every attempt keeps the last attempt's usage",
			give: []transporttest.Response{{Body: partial, Cut: true}},
			want: concat(firstText, []protocol.Message{retry(1, 1, "network: read stream: ")},
				firstText, []protocol.Message{retry(2, 2, "network: read stream: ")},
				firstText, []protocol.Message{{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 25, Output: 1}},
					failed(protocol.ErrNetwork, "read stream: ")}),
			wantRequests: 3,
		},
		{
			name:         "a 5 MB line",
			give:         []transporttest.Response{{Body: bigBody, MaxChunk: 64 << 10}},
			want:         bigSuccess,
			wantRequests: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := transporttest.NewServer(t, tt.give...)
			c := newClient(t, srv, transport.Options{IdleTimeout: tt.idle})

			got := stream(t, c)

			assertMessages(t, tt.want, got)
			assert.Len(t, srv.Requests(), tt.wantRequests)
			for _, r := range srv.Received() {
				assert.Equal(t, testKey, r.Header.Get("X-Api-Key"), "the key was sent")
			}
			for _, m := range got {
				assert.NotContains(t, m.Reason, testKey)
				assert.NotContains(t, m.Err.Message, testKey)
			}
		})
	}
}

// TestClientRedactsKey has the server echo the key in every error it can send: an
// error body of a retried status, a mid-stream error event, and a final error body.
func TestClientRedactsKey(t *testing.T) {
	echo := "invalid x-api-key: " + testKey
	srv := transporttest.NewServer(t,
		transporttest.Response{Status: 500, Header: jsonHeader(nil), Body: errorBody("api_error", echo)},
		transporttest.Response{Body: []byte("event: error\ndata: " + string(errorBody("overloaded_error", echo)) + "\n\n")},
		transporttest.Response{Status: 401, Header: jsonHeader(nil), Body: []byte("key " + testKey + " rejected")},
	)
	c := newClient(t, srv, transport.Options{MaxAttempts: 5})

	got := stream(t, c)

	assertMessages(t, []protocol.Message{
		retry(1, 1, "server: HTTP 500: api_error: invalid x-api-key: [REDACTED]"),
		retry(2, 2, "overloaded: overloaded_error: invalid x-api-key: [REDACTED]"),
		failed(protocol.ErrAuth, "HTTP 401: key [REDACTED] rejected"),
	}, got)
	for _, m := range got {
		line, err := protocol.AppendEvent(nil, m, protocol.Envelope{})
		require.NoError(t, err)
		assert.NotContains(t, string(line), testKey)
		assert.NotContains(t, string(line), testKey[:20], "no long piece of the key either")
	}
}

// TestClientSharedLimiter has two clients share one Limiter: a 429 seen by the first
// holds back the second's request for the server's retry-after too.
func TestClientSharedLimiter(t *testing.T) {
	const pause = 400 * time.Millisecond
	ok := transporttest.Response{Body: fixture(t, "text_only")}
	srv := transporttest.NewServer(t,
		transporttest.Response{Status: 429, Header: jsonHeader(map[string]string{"Retry-After": "0.4"}), Body: errorBody("rate_limit_error", "slow down")},
		ok, ok)
	lim := transport.NewLimiter(nil)
	a := newClient(t, srv, transport.Options{Limiter: lim})
	b := newClient(t, srv, transport.Options{Limiter: lim})

	var wg sync.WaitGroup
	var gotB []protocol.Message
	var gotA []protocol.Message
	for m := range a.Stream(context.Background(), testRequest) {
		gotA = append(gotA, m)
		if m.Kind == protocol.KindRetry {
			// The pause is in place: b starts now and must wait it out.
			wg.Go(func() {
				for m := range b.Stream(context.Background(), testRequest) {
					gotB = append(gotB, m)
				}
			})
		}
	}
	wg.Wait()

	require.NotEmpty(t, gotA)
	assert.Equal(t, protocol.KindRetry, gotA[0].Kind)
	assert.Equal(t, pause.Milliseconds(), gotA[0].DelayMS)
	assert.Equal(t, protocol.KindStop, gotA[len(gotA)-1].Kind)
	require.NotEmpty(t, gotB)
	assert.Equal(t, protocol.KindText, gotB[0].Kind, "b never saw the 429 itself")
	assert.Equal(t, protocol.KindStop, gotB[len(gotB)-1].Kind)

	rec := srv.Received()
	require.Len(t, rec, 3)
	for i := 1; i < 3; i++ {
		assert.GreaterOrEqual(t, rec[i].At.Sub(rec[0].At), pause, "request %d waited out the pause", i)
	}
	throttled, pauses := lim.Throttled()
	assert.Equal(t, 1, pauses)
	assert.Equal(t, pause, throttled)
}

package transport

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/fuzzguard"
	"github.com/agentrun/agentrun/protocol"
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestParseRateHeaders(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		give         http.Header
		wantRequests limitState
		wantTokens   limitState
	}{
		"anthropic": {
			give: header("anthropic-ratelimit-requests-limit", "60", "anthropic-ratelimit-requests-remaining", "59",
				"anthropic-ratelimit-requests-reset", "2026-12-01T12:00:01Z",
				"anthropic-ratelimit-tokens-limit", "80000", "anthropic-ratelimit-tokens-remaining", "79000",
				"anthropic-ratelimit-tokens-reset", "2026-12-01T12:00:00.75Z"),
			wantRequests: limitState{ok: true, limit: 60, remaining: 59, full: now.Add(time.Second)},
			wantTokens:   limitState{ok: true, limit: 80000, remaining: 79000, full: now.Add(750 * time.Millisecond)},
		},
		"anthropic input tokens when tokens is absent": {
			give: header("anthropic-ratelimit-input-tokens-limit", "40000", "anthropic-ratelimit-input-tokens-remaining", "0",
				"anthropic-ratelimit-input-tokens-reset", "2026-12-01T12:01:00Z"),
			wantTokens: limitState{ok: true, limit: 40000, remaining: 0, full: now.Add(time.Minute)},
		},
		"openai": {
			give: header("x-ratelimit-limit-requests", "500", "x-ratelimit-remaining-requests", "499",
				"x-ratelimit-reset-requests", "120ms", "x-ratelimit-limit-tokens", "30000",
				"x-ratelimit-remaining-tokens", "29000", "x-ratelimit-reset-tokens", "6m0s"),
			wantRequests: limitState{ok: true, limit: 500, remaining: 499, full: now.Add(120 * time.Millisecond)},
			wantTokens:   limitState{ok: true, limit: 30000, remaining: 29000, full: now.Add(6 * time.Minute)},
		},
		"no reset": {
			give:         header("x-ratelimit-limit-requests", "10", "x-ratelimit-remaining-requests", "3"),
			wantRequests: limitState{ok: true, limit: 10, remaining: 3},
		},
		"bad reset is left out": {
			give:         header("x-ratelimit-limit-requests", "10", "x-ratelimit-remaining-requests", "3", "x-ratelimit-reset-requests", "soon"),
			wantRequests: limitState{ok: true, limit: 10, remaining: 3},
		},
		"remaining above the limit": {give: header("x-ratelimit-limit-requests", "10", "x-ratelimit-remaining-requests", "11")},
		"zero limit":                {give: header("x-ratelimit-limit-requests", "0", "x-ratelimit-remaining-requests", "0")},
		"negative remaining":        {give: header("x-ratelimit-limit-requests", "10", "x-ratelimit-remaining-requests", "-1")},
		"not a number":              {give: header("x-ratelimit-limit-requests", "ten", "x-ratelimit-remaining-requests", "1")},
		"NaN":                       {give: header("x-ratelimit-limit-requests", "NaN", "x-ratelimit-remaining-requests", "NaN")},
		"remaining only":            {give: header("x-ratelimit-remaining-requests", "1")},
		"none":                      {give: header()},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := parseRateHeaders(tt.give, now)
			assert.Equal(t, tt.wantRequests, got.requests)
			assert.Equal(t, tt.wantTokens, got.tokens)
		})
	}
}

// FuzzParseRateHeaders feeds arbitrary header values: what is kept always has a
// positive limit and a remaining count within it.
func FuzzParseRateHeaders(f *testing.F) {
	f.Add("60", "59", "2026-12-01T12:00:01Z", "120ms")
	f.Add("1e3", "0", "2026-12-01T12:00:00.5+01:00", "6m0s")
	f.Add("Inf", "1", "", "-1s")
	f.Fuzz(func(t *testing.T, limit, remaining, resetTime, resetDuration string) {
		fuzzguard.Run(len(limit)+len(remaining)+len(resetTime)+len(resetDuration), func() {
			now := time.Unix(1e9, 0)
			rh := parseRateHeaders(header("anthropic-ratelimit-requests-limit", limit, "anthropic-ratelimit-requests-remaining", remaining,
				"anthropic-ratelimit-requests-reset", resetTime, "x-ratelimit-limit-tokens", limit,
				"x-ratelimit-remaining-tokens", remaining, "x-ratelimit-reset-tokens", resetDuration), now)
			for _, st := range []limitState{rh.requests, rh.tokens} {
				if st.ok && (st.limit <= 0 || st.remaining < 0 || st.remaining > st.limit) {
					t.Fatalf("kept %+v", st)
				}
				if !st.ok && st != (limitState{}) {
					t.Fatalf("left out but set: %+v", st)
				}
			}
			if !rh.tokens.full.IsZero() && rh.tokens.full.Before(now) {
				t.Fatalf("a reset duration in the past: %v", rh.tokens.full)
			}
		})
	})
}

// TestLimiterHeaderPacing checks when requests start once a response has described
// the endpoint's buckets: spaced by the refill rate the headers imply (with its
// margins), the tokens of a request counted too, and a response of an older request
// not undoing what a newer one said.
func TestLimiterHeaderPacing(t *testing.T) {
	second := float64(time.Second)
	tests := []struct {
		name    string
		headers func(now time.Time) http.Header
		// tokens of each request after the observed one, and when each must start,
		// from the observation, in seconds
		tokens []int64
		want   []float64
	}{
		{
			name: "anthropic requests, an empty bucket refilled in a minute",
			headers: func(now time.Time) http.Header {
				return header("anthropic-ratelimit-requests-limit", "60", "anthropic-ratelimit-requests-remaining", "0",
					"anthropic-ratelimit-requests-reset", now.Add(time.Minute).Format(time.RFC3339Nano))
			},
			tokens: []int64{0, 0, 0},
			// 1.6 requests (one and the reserve) at 0.98 a second, then one more each time
			want: []float64{1.6 / 0.98, 2.6 / 0.98, 3.6 / 0.98},
		},
		{
			name: "openai requests, room left: no wait until it runs out",
			headers: func(time.Time) http.Header {
				return header("x-ratelimit-limit-requests", "100", "x-ratelimit-remaining-requests", "3", "x-ratelimit-reset-requests", "97s")
			},
			tokens: []int64{0, 0, 0},
			// the reserve is one request of the hundred: the third waits for two
			want: []float64{0, 0, 1 / 0.98},
		},
		{
			name: "openai tokens: a request waits until the bucket holds its tokens",
			headers: func(time.Time) http.Header {
				return header("x-ratelimit-limit-tokens", "10000", "x-ratelimit-remaining-tokens", "1000", "x-ratelimit-reset-tokens", "54s")
			},
			tokens: []int64{500, 2000},
			want:   []float64{0, (2100 - 500) / (9000.0 / 54 * 0.98)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := NewLimiter(nil)
				s, err := l.Acquire(context.Background(), 0)
				require.NoError(t, err)
				start := time.Now()
				s.Observe(tt.headers(start))
				s.End(Succeeded)
				for i, tokens := range tt.tokens {
					s, err := l.Acquire(context.Background(), tokens)
					require.NoError(t, err)
					assert.InDelta(t, tt.want[i], float64(time.Since(start))/second, 1e-6, "request %d", i)
					s.End(Succeeded)
				}
				assert.InDelta(t, tt.want[len(tt.want)-1], float64(l.Paced())/second, 1e-6, "paced time")
			})
		})
	}
}

func TestLimiterFreshestHeadersWin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLimiter(nil)
		older, _ := l.Acquire(context.Background(), 0)
		newer, _ := l.Acquire(context.Background(), 0)
		later, _ := l.Acquire(context.Background(), 0) // admitted after newer: its request counts
		empty := header("x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "1", "x-ratelimit-reset-requests", "59s")
		full := header("x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "60")
		newer.Observe(empty)
		older.Observe(full) // older news: ignored
		for _, s := range []*Slot{older, newer, later} {
			s.End(Succeeded)
		}
		start := time.Now()
		s, err := l.Acquire(context.Background(), 0)
		require.NoError(t, err)
		// one remaining, minus the later request: empty, so 1.6 requests at 0.98 a second
		assert.InDelta(t, 1.6/0.98, time.Since(start).Seconds(), 1e-6)
		s.End(Succeeded)
	})
}

// TestStreamPacedByHeaders has a client read the headers of a real response: the
// next request waits for the bucket they describe, and its session hears of the wait.
func TestStreamPacedByHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &fakeNet{replies: []reply{{
			header: map[string]string{"Anthropic-Ratelimit-Requests-Limit": "60", "Anthropic-Ratelimit-Requests-Remaining": "0",
				"Anthropic-Ratelimit-Requests-Reset": time.Now().Add(time.Minute).Format(time.RFC3339Nano)},
			body: "text:a\nstop\n",
		}}}
		lim := NewLimiter(nil)
		c := newFakeClient(net, Options{Limiter: lim})
		collect(context.Background(), c)
		var notices []time.Duration
		ctx := protocol.WithWaitNotice(context.Background(), func(d time.Duration) { notices = append(notices, d) })
		got := collect(ctx, c)
		require.Len(t, net.at, 2)
		assert.InDelta(t, 1.6/0.98, net.at[1].Sub(net.at[0]).Seconds(), 1e-6)
		require.NotEmpty(t, notices)
		assert.InDelta(t, 1.6/0.98, notices[0].Seconds(), 1e-6, "the wait is announced")
		assert.Equal(t, "a", got[0].Text)
		assert.InDelta(t, 1.6/0.98, lim.Paced().Seconds(), 1e-6)
	})
}

func TestStreamRateLimitShrinksWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &fakeNet{replies: []reply{
			{status: 429, header: map[string]string{"Retry-After": "1"}, body: "rate_limit_error:slow down"},
			{body: "text:a\nstop\n"},
		}}
		lim := NewLimiter(nil)
		c := newFakeClient(net, Options{Limiter: lim})
		got := collect(context.Background(), c)
		assert.Equal(t, protocol.KindRetry, got[0].Kind)
		assert.True(t, strings.HasPrefix(got[0].Reason, string(protocol.ErrRateLimit)))
		assert.Equal(t, 2.0, lim.Window(), "one in flight at the 429: a limit of one, which the success of a whole window of one grows by one")
	})
}

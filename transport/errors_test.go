package transport

import (
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/protocol"
)

func TestErrorRetryable(t *testing.T) {
	tests := map[string]struct {
		give Error
		want bool
	}{
		"rate limit":              {give: Error{Kind: protocol.ErrRateLimit}, want: true},
		"overloaded":              {give: Error{Kind: protocol.ErrOverloaded}, want: true},
		"stream":                  {give: Error{Kind: protocol.ErrStream}, want: true},
		"auth":                    {give: Error{Kind: protocol.ErrAuth}},
		"request":                 {give: Error{Kind: protocol.ErrRequest}},
		"server told not to":      {give: Error{Kind: protocol.ErrServer, ShouldRetry: RetryNo}},
		"server told to":          {give: Error{Kind: protocol.ErrRequest, ShouldRetry: RetryYes}, want: true},
		"inactivity":              {give: Error{Kind: protocol.ErrInactivity}, want: true},
		"network":                 {give: Error{Kind: protocol.ErrNetwork}, want: true},
		"request build is final":  {give: Error{Kind: protocol.ErrRequest, ShouldRetry: RetryNo}},
		"timeout waiting headers": {give: Error{Kind: protocol.ErrTimeout}, want: true},
	}
	for name, tt := range tests {
		assert.Equal(t, tt.want, tt.give.Retryable(), name)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		give map[string]string
		want time.Duration
	}{
		"none":                  {},
		"seconds":               {give: map[string]string{"Retry-After": "3"}, want: 3 * time.Second},
		"fractional seconds":    {give: map[string]string{"Retry-After": "0.25"}, want: 250 * time.Millisecond},
		"milliseconds first":    {give: map[string]string{"Retry-After-Ms": "1500.5", "Retry-After": "9"}, want: 1500500 * time.Microsecond},
		"bad milliseconds":      {give: map[string]string{"Retry-After-Ms": "soon", "Retry-After": "2"}, want: 2 * time.Second},
		"HTTP date":             {give: map[string]string{"Retry-After": "Thu, 01 Jan 2026 00:00:30 GMT"}, want: 30 * time.Second},
		"HTTP date in the past": {give: map[string]string{"Retry-After": "Wed, 31 Dec 2025 23:59:00 GMT"}},
		"zero":                  {give: map[string]string{"Retry-After": "0"}},
		"negative":              {give: map[string]string{"Retry-After": "-4"}},
		"garbage":               {give: map[string]string{"Retry-After": "later"}},
	}
	for name, tt := range tests {
		h := http.Header{}
		for k, v := range tt.give {
			h.Set(k, v)
		}
		assert.Equal(t, tt.want, retryAfter(h, now), name)
	}
}

func TestShouldRetry(t *testing.T) {
	tests := map[string]struct {
		give string // the x-should-retry header; "" sends none
		want RetryVerdict
	}{
		"no header":    {want: RetryUnsaid},
		"true":         {give: "true", want: RetryYes},
		"false":        {give: "false", want: RetryNo},
		"any case":     {give: " TRUE ", want: RetryYes},
		"other word":   {give: "maybe", want: RetryUnsaid},
		"numeric form": {give: "1", want: RetryUnsaid},
	}
	for name, tt := range tests {
		h := http.Header{}
		if tt.give != "" {
			h.Set("X-Should-Retry", tt.give)
		}
		assert.Equal(t, tt.want, shouldRetry(h), name)
	}
}

func TestRetryDelay(t *testing.T) {
	tests := map[string]struct {
		give      Error
		attempt   int
		jitter    float64
		waited    time.Duration
		want      time.Duration
		wantRetry bool
	}{
		"first backoff":             {give: Error{Kind: protocol.ErrServer}, attempt: 1, want: 500 * time.Millisecond, wantRetry: true},
		"second backoff":            {give: Error{Kind: protocol.ErrServer}, attempt: 2, want: time.Second, wantRetry: true},
		"jitter takes up to a 25th": {give: Error{Kind: protocol.ErrServer}, attempt: 3, jitter: 0.5, want: 1750 * time.Millisecond, wantRetry: true},
		"capped at the max delay":   {give: Error{Kind: protocol.ErrServer}, attempt: 5, want: 8 * time.Second, wantRetry: true},
		"huge attempt stays capped": {give: Error{Kind: protocol.ErrServer}, attempt: 70, want: 8 * time.Second, wantRetry: true},
		"server delay":              {give: Error{Kind: protocol.ErrRateLimit, RetryAfter: 20 * time.Second}, attempt: 1, want: 20 * time.Second, wantRetry: true},
		"server delay over the max": {give: Error{Kind: protocol.ErrRateLimit, RetryAfter: 61 * time.Second}, attempt: 1},
		"total wait exceeded":       {give: Error{Kind: protocol.ErrServer}, attempt: 2, waited: 119500 * time.Millisecond},
		"not retryable":             {give: Error{Kind: protocol.ErrAuth}, attempt: 1},
		"last attempt":              {give: Error{Kind: protocol.ErrServer}, attempt: 1000},
		"x-should-retry on a 400":   {give: Error{Kind: protocol.ErrRequest, ShouldRetry: RetryYes}, attempt: 1, want: 500 * time.Millisecond, wantRetry: true},
		"x-should-retry false wins": {give: Error{Kind: protocol.ErrServer, ShouldRetry: RetryNo, RetryAfter: time.Second}, attempt: 1},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := NewClient(nil, Options{MaxAttempts: 1000, Jitter: func() float64 { return tt.jitter }})
			got, ok := c.retryDelay(&tt.give, tt.attempt, tt.waited)
			assert.Equal(t, tt.wantRetry, ok)
			if tt.wantRetry {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestClipBody(t *testing.T) {
	tests := map[string]struct {
		body string
		want string
	}{
		"empty":     {body: " \n", want: "(empty)"},
		"trimmed":   {body: "  overloaded \n", want: "overloaded"},
		"fits":      {body: strings.Repeat("a", maxBody), want: strings.Repeat("a", maxBody)},
		"ascii cut": {body: strings.Repeat("a", maxBody+1), want: strings.Repeat("a", maxBody-3) + "…"},
		// 1,993 bytes, then 3-byte characters: the cut at 1,997 (room left for the "…")
		// falls inside the second.
		"three-byte character at the cut": {body: strings.Repeat("a", maxBody-7) + strings.Repeat("€", 4),
			want: strings.Repeat("a", maxBody-7) + "€…"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := clipBody([]byte(tt.body))
			assert.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got), "the message is valid UTF-8")
			assert.LessOrEqual(t, len(got), maxBody)
		})
	}
}

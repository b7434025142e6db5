package scripted_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/transport/scripted"
)

// clock is a settable clock for the fake server.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// post sends one streaming request of format path with a user message of text and
// returns the response, its body read.
func post(t *testing.T, url, path, text string) (*reply, string) {
	t.Helper()
	var body string
	switch path {
	case "/v1/messages":
		body = `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":` + quote(text) + `}]}`
	case "/v1/chat/completions":
		body = `{"model":"m","stream":true,"messages":[{"role":"user","content":` + quote(text) + `}]}`
	}
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, errors.Join(err, resp.Body.Close()))
	return &reply{StatusCode: resp.StatusCode, Header: resp.Header, Body: strings.NewReader(string(b))}, string(b)
}

func TestRateLimitRequests(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, path string
		headers    func(h http.Header) (limit, remaining, reset string)
		wantReset  []string // of each of the three answers
		wantBody   string
	}{
		{
			name: "anthropic", path: "/v1/messages",
			headers: func(h http.Header) (string, string, string) {
				return h.Get("Anthropic-Ratelimit-Requests-Limit"), h.Get("Anthropic-Ratelimit-Requests-Remaining"), h.Get("Anthropic-Ratelimit-Requests-Reset")
			},
			wantReset: []string{"2026-12-01T12:00:30Z", "2026-12-01T12:01:00Z", "2026-12-01T12:01:00Z"},
			wantBody:  `"type":"rate_limit_error"`,
		},
		{
			name: "openai", path: "/v1/chat/completions",
			headers: func(h http.Header) (string, string, string) {
				return h.Get("X-Ratelimit-Limit-Requests"), h.Get("X-Ratelimit-Remaining-Requests"), h.Get("X-Ratelimit-Reset-Requests")
			},
			wantReset: []string{"30s", "1m0s", "1m0s"},
			wantBody:  `"code":"rate_limit_exceeded"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: start}
			m := scripted.New(scripted.Options{Now: clk.now, RateLimit: scripted.RateLimit{RequestsPerMinute: 2}})
			srv := httptest.NewServer(m.Handler())
			defer srv.Close()

			var statuses []int
			for i, wantRemaining := range []string{"1", "0", "0"} {
				resp, body := post(t, srv.URL, tt.path, "hello")
				statuses = append(statuses, resp.StatusCode)
				limit, remaining, reset := tt.headers(resp.Header)
				assert.Equal(t, "2", limit, "answer %d", i)
				assert.Equal(t, wantRemaining, remaining, "answer %d", i)
				assert.Equal(t, tt.wantReset[i], reset, "answer %d", i)
				if resp.StatusCode == http.StatusTooManyRequests {
					assert.Equal(t, "30", resp.Header.Get("Retry-After"), "one request refills in half a minute")
					assert.Contains(t, body, tt.wantBody)
				}
			}
			assert.Equal(t, []int{200, 200, 429}, statuses)
			assert.Equal(t, 1, m.RateLimited())

			clk.advance(30 * time.Second)
			resp, _ := post(t, srv.URL, tt.path, "hello")
			assert.Equal(t, http.StatusOK, resp.StatusCode, "a request's worth refilled")
			_, remaining, _ := tt.headers(resp.Header)
			assert.Equal(t, "0", remaining)
		})
	}
}

func TestRateLimitTokens(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	m := scripted.New(scripted.Options{Now: clk.now, RateLimit: scripted.RateLimit{TokensPerMinute: 1000}})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	long := strings.Repeat("word ", 480) // 2,400 bytes: 600 input tokens

	resp, _ := post(t, srv.URL, "/v1/messages", long)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "400", resp.Header.Get("Anthropic-Ratelimit-Tokens-Remaining"))
	assert.Empty(t, resp.Header.Get("Anthropic-Ratelimit-Requests-Limit"), "no request limit: no request headers")

	resp, _ = post(t, srv.URL, "/v1/messages", long)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "12", resp.Header.Get("Retry-After"), "200 tokens more take 12 s at 1,000 a minute")

	resp, _ = post(t, srv.URL, "/v1/messages", "hi")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a small request still fits")

	clk.advance(12 * time.Second)
	resp, _ = post(t, srv.URL, "/v1/messages", long)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 1, m.RateLimited())
}

func TestRateLimitNone(t *testing.T) {
	m := scripted.New(scripted.Options{})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, _ := post(t, srv.URL, "/v1/messages", "hello")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Anthropic-Ratelimit-Requests-Limit"))
	assert.Zero(t, m.RateLimited())
}

func TestRateLimitWindow(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	m := scripted.New(scripted.Options{Now: clk.now, RateLimit: scripted.RateLimit{RequestsPerMinute: 600, Window: 200 * time.Millisecond}})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	var statuses []int
	for range 3 {
		resp, _ := post(t, srv.URL, "/v1/chat/completions", "hello")
		statuses = append(statuses, resp.StatusCode)
		assert.Equal(t, "2", resp.Header.Get("X-Ratelimit-Limit-Requests"), "ten a second, two at a time")
	}
	assert.Equal(t, []int{200, 200, 429}, statuses)
	clk.advance(100 * time.Millisecond)
	resp, _ := post(t, srv.URL, "/v1/chat/completions", "hello")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "200ms", resp.Header.Get("X-Ratelimit-Reset-Requests"), "empty again: two to refill, at ten a second")
}

package scripted

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// RateLimit is what the HTTP form of a Model allows per minute, as a provider's rate
// limits do: each limit is a token bucket that holds a minute's worth (or Window's)
// and refills continuously. A request takes one request and its input tokens (the usage it
// reports); one that finds either bucket short is answered 429 with the error body
// of its format and a retry-after of when both will hold it. Every answer, 429s
// included, carries the buckets' state in the format's headers: Anthropic's
// anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset} (reset an RFC 3339
// time at which the bucket is full again), OpenAI's
// x-ratelimit-{limit,remaining,reset}-{requests,tokens} (reset a duration such as
// "1.5s"). A zero limit is none.
type RateLimit struct {
	RequestsPerMinute int
	TokensPerMinute   int
	// Window is how much of the limit a full bucket holds, as time [1m]: a shorter
	// one allows smaller bursts at the same rate.
	Window time.Duration
}

// rateLimits is the state of a Model's RateLimit.
type rateLimits struct {
	mu               sync.Mutex
	requests, tokens serverBucket
	limited          int // requests answered 429
}

func newRateLimits(rl RateLimit, now time.Time) *rateLimits {
	if rl.RequestsPerMinute <= 0 && rl.TokensPerMinute <= 0 {
		return nil
	}
	window := rl.Window
	if window <= 0 {
		window = time.Minute
	}
	return &rateLimits{requests: newServerBucket(rl.RequestsPerMinute, window, now), tokens: newServerBucket(rl.TokensPerMinute, window, now)}
}

// serverBucket is one limit; a zero size is none.
type serverBucket struct {
	size  float64 // what it holds full
	rate  float64 // refill per second
	level float64
	at    time.Time
}

func newServerBucket(perMinute int, window time.Duration, now time.Time) serverBucket {
	rate := float64(max(perMinute, 0)) / 60
	size := math.Max(rate*window.Seconds(), min(1, rate))
	return serverBucket{size: size, rate: rate, level: size, at: now}
}

func (b *serverBucket) refill(now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.level = min(b.size, b.level+b.rate*d.Seconds())
		b.at = now
	}
}

// short returns how long until the bucket holds n (all of it when n is more), 0 when it
// does now.
func (b *serverBucket) short(n float64) time.Duration {
	n = min(n, b.size)
	if b.size == 0 || b.level >= n {
		return 0
	}
	return time.Duration(math.Ceil((n - b.level) / b.rate * float64(time.Second)))
}

// untilFull is how long the bucket takes to fill up.
func (b *serverBucket) untilFull() time.Duration {
	return time.Duration(math.Ceil((b.size - b.level) / b.rate * float64(time.Second)))
}

// admit takes a request of tokens input tokens, or answers it 429, and writes the
// buckets' headers for format f. It reports whether the request goes on.
func (rl *rateLimits) admit(w http.ResponseWriter, f format, tokens int64, now time.Time) bool {
	rl.mu.Lock()
	rl.requests.refill(now)
	rl.tokens.refill(now)
	wait := max(rl.requests.short(1), rl.tokens.short(float64(tokens)))
	if wait == 0 {
		if rl.requests.size > 0 {
			rl.requests.level--
		}
		if rl.tokens.size > 0 {
			rl.tokens.level -= min(float64(tokens), rl.tokens.size)
		}
	} else {
		rl.limited++
	}
	h := w.Header()
	rateHeaders(h, f, "requests", &rl.requests, now)
	rateHeaders(h, f, "tokens", &rl.tokens, now)
	rl.mu.Unlock()
	if wait == 0 {
		return true
	}
	h.Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
	writeError(w, f, http.StatusTooManyRequests, "rate limit of the scripted model exceeded: retry in "+wait.String(), "")
	return false
}

// rateHeaders writes the state of bucket b, named what, in format f's headers.
func rateHeaders(h http.Header, f format, what string, b *serverBucket, now time.Time) {
	if b.size == 0 {
		return
	}
	limit := strconv.FormatInt(int64(b.size), 10)
	remaining := strconv.FormatInt(int64(math.Floor(max(b.level, 0))), 10)
	if f == formatAnthropic {
		p := "Anthropic-Ratelimit-" + what + "-"
		h.Set(p+"Limit", limit)
		h.Set(p+"Remaining", remaining)
		h.Set(p+"Reset", now.Add(b.untilFull()).UTC().Format(time.RFC3339Nano))
		return
	}
	h.Set("X-Ratelimit-Limit-"+what, limit)
	h.Set("X-Ratelimit-Remaining-"+what, remaining)
	h.Set("X-Ratelimit-Reset-"+what, b.untilFull().String())
}

// RateLimited returns how many requests the model answered 429 for its RateLimit.
func (m *Model) RateLimited() int {
	if m.limits == nil {
		return 0
	}
	m.limits.mu.Lock()
	defer m.limits.mu.Unlock()
	return m.limits.limited
}

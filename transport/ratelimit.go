package transport

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// rateHeaders is what a response says of its endpoint's rate limits.
type rateHeaders struct {
	requests, tokens limitState
}

// limitState is one limit as a response describes it: the bucket holds limit, has
// remaining left, and is full again at full.
type limitState struct {
	ok               bool
	limit, remaining float64
	full             time.Time
}

// parseRateHeaders reads the rate-limit headers of Anthropic
// (anthropic-ratelimit-requests-limit, -remaining and -reset, an RFC 3339 time; the
// same for tokens, or for input-tokens when tokens is absent) and of OpenAI
// (x-ratelimit-limit-requests, x-ratelimit-remaining-requests and
// x-ratelimit-reset-requests, a duration such as "1s", "6m0s" or "20ms"; the same for
// tokens), now being when the response arrived. A limit without its limit or
// remaining header, or with values out of range, is left out.
func parseRateHeaders(h http.Header, now time.Time) rateHeaders {
	var rh rateHeaders
	rh.requests = anthropicLimit(h, "requests")
	rh.tokens = anthropicLimit(h, "tokens")
	if !rh.tokens.ok {
		rh.tokens = anthropicLimit(h, "input-tokens")
	}
	if !rh.requests.ok {
		rh.requests = openAILimit(h, "requests", now)
	}
	if !rh.tokens.ok {
		rh.tokens = openAILimit(h, "tokens", now)
	}
	return rh
}

func anthropicLimit(h http.Header, what string) limitState {
	p := "Anthropic-Ratelimit-" + what + "-"
	st, ok := counts(h.Get(p+"Limit"), h.Get(p+"Remaining"))
	if !ok {
		return limitState{}
	}
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(h.Get(p+"Reset"))); err == nil {
		st.full = t
	}
	return st
}

func openAILimit(h http.Header, what string, now time.Time) limitState {
	st, ok := counts(h.Get("X-Ratelimit-Limit-"+what), h.Get("X-Ratelimit-Remaining-"+what))
	if !ok {
		return limitState{}
	}
	if d, err := time.ParseDuration(strings.TrimSpace(h.Get("X-Ratelimit-Reset-" + what))); err == nil && d >= 0 {
		st.full = now.Add(d)
	}
	return st
}

// counts reads a limit and its remaining count: numbers, the limit positive, the
// remaining count within it.
func counts(limit, remaining string) (limitState, bool) {
	l, err1 := strconv.ParseFloat(strings.TrimSpace(limit), 64)
	r, err2 := strconv.ParseFloat(strings.TrimSpace(remaining), 64)
	if err1 != nil || err2 != nil || math.IsNaN(l) || math.IsNaN(r) || l <= 0 || l > 1e15 || r < 0 || r > l {
		return limitState{}, false
	}
	return limitState{ok: true, limit: l, remaining: r}, true
}

// The margins of pacing: the refill rate a bucket is credited with is a little under
// the one its headers imply, and a request starts only when the bucket holds a little
// more than it takes, so that rounding in the headers and requests the server counts
// a moment later than this client do not make it overshoot.
const (
	rateMargin = 0.98
	reserve    = 0.01 // of the bucket's size
)

// bucket mirrors one of the endpoint's token buckets. Its limit is 0 until a response
// has described it; an unknown bucket never holds a request back.
type bucket struct {
	limit float64
	rate  float64   // refill per second
	level float64   // at at; negative when requests were admitted on credit
	at    time.Time // when level was right
}

// levelAt is the bucket's content at now.
func (b *bucket) levelAt(now time.Time) float64 {
	return min(b.limit, b.level+b.rate*now.Sub(b.at).Seconds())
}

// wait returns how long until the bucket holds enough for a request of n.
func (b *bucket) wait(now time.Time, n float64) time.Duration {
	if b.limit <= 0 || b.rate <= 0 {
		return 0
	}
	need := min(n+b.limit*reserve, b.limit) // a request larger than the bucket waits for a full one
	lvl := b.levelAt(now)
	if lvl >= need {
		return 0
	}
	return time.Duration(math.Ceil((need - lvl) / b.rate * float64(time.Second)))
}

// take takes n from the bucket at now.
func (b *bucket) take(now time.Time, n float64) {
	if b.limit <= 0 {
		return
	}
	b.level = b.levelAt(now) - n
	b.at = now
}

// sync sets the bucket from st, which described it as of when its request was
// admitted, since ago; after is what was admitted after that request. The refill rate
// is what brings the remaining count back to the limit at st.full; without one (a full
// bucket, no reset given), the last rate stays, or else the limit is taken to be per
// minute.
func (b *bucket) sync(st limitState, now time.Time, since time.Duration, after float64) {
	if !st.ok {
		return
	}
	admitted := now.Add(-since)
	if st.remaining < st.limit && st.full.After(admitted) {
		b.rate = (st.limit - st.remaining) / st.full.Sub(admitted).Seconds() * rateMargin
	}
	if b.rate <= 0 {
		b.rate = st.limit / 60 * rateMargin
	}
	b.limit = st.limit
	b.level = min(st.limit, st.remaining+b.rate*since.Seconds()) - after
	b.at = now
}

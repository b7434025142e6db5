package transport

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// Limiter is the shared admission of one provider endpoint: every request of every
// client sharing it starts through Acquire, in the order they asked.
//
//   - A rate limit or an overload seen by any client pauses them all for the server's
//     delay (Pause), instead of each hammering the endpoint on its own.
//   - The endpoint's rate-limit headers (see rateHeaders) are mirrored in two token
//     buckets, requests and tokens, and a request starts only once both hold enough:
//     requests are paced before the limit is hit rather than after.
//   - The number of requests in flight adapts (AIMD): unbounded until the first rate
//     limit, it is then halved on each one (once for each round of requests, not once
//     per failing request of the same burst) and grows back on successes while it
//     binds: by one for each success (doubling every round) up to half the largest
//     window a rate limit ever cut, so that a storm of 429s does not leave it at one
//     for long, then by one for every window of successes.
//
// A nil *Limiter admits everything at once. It is safe for concurrent use.
type Limiter struct {
	now func() time.Time

	mu        sync.Mutex
	until     time.Time     // no request starts before this
	throttled time.Duration // total length of the pause windows, overlaps counted once
	pauses    int

	requests, tokens bucket
	admitted         uint64 // requests admitted so far
	spent            int64  // tokens those requests were estimated at
	synced           uint64 // the admission whose headers the buckets last took

	window    float64 // the AIMD in-flight limit; 0 before the first cut (unbounded)
	threshold float64 // below it, the window grows by one per success
	inflight  int
	cutAfter  uint64 // requests admitted up to this one belong to the last cut's round
	// fullAt is the last admission at which the window was full (or held a request
	// back): the successes of requests admitted up to then say a larger window would be
	// used, and grow it.
	fullAt uint64

	queue     []*waiter
	paced     time.Duration // total time the head of the queue was held by pacing or the window
	pacedFrom time.Time     // when the current hold began; zero when none
}

// waiter is one Acquire waiting its turn.
type waiter struct {
	tokens int64
	nested bool          // a sub-agent's request: see AcquireNested
	wake   chan struct{} // buffered: a state change that may admit it
}

// NewLimiter returns a limiter using the clock now (nil means time.Now).
func NewLimiter(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now}
}

// announceEvery is how often a request waiting for its turn without a known end (the
// in-flight limit, or others ahead of it) announces that it still waits; it announces
// twice that, so its session's watchdog never counts the wait as silence.
const announceEvery = 5 * time.Second

// Acquire waits until the endpoint may take one more request, estimated at tokens
// tokens, then returns its Slot, which the caller must End. It fails only when ctx
// ends. Every wait is announced first (protocol.NoticeWait): waiting one's turn is
// never a silent session.
func (l *Limiter) Acquire(ctx context.Context, tokens int64) (*Slot, error) {
	return l.acquire(ctx, &waiter{tokens: max(tokens, 0), wake: make(chan struct{}, 1)})
}

// AcquireNested is Acquire for a request made while another of the same session holds
// its slot (a sub-agent's, while its parent's call waits for the Task tool): it goes to
// the head of the queue and is not held back by the in-flight window, which the parent
// already counts against, or the two would wait for each other. Pauses and the rate
// buckets still apply.
func (l *Limiter) AcquireNested(ctx context.Context, tokens int64) (*Slot, error) {
	return l.acquire(ctx, &waiter{tokens: max(tokens, 0), nested: true, wake: make(chan struct{}, 1)})
}

func (l *Limiter) acquire(ctx context.Context, w *waiter) (*Slot, error) {
	if l == nil {
		return nil, ctx.Err()
	}
	l.mu.Lock()
	if w.nested {
		l.queue = append([]*waiter{w}, l.queue...)
	} else {
		l.queue = append(l.queue, w)
	}
	for {
		now := l.now()
		d, known := announceEvery, false
		if l.queue[0] == w {
			var held bool
			d, known, held = l.delay(now, w)
			l.hold(now, held)
			if d <= 0 {
				s := l.admit(now, w)
				l.mu.Unlock()
				return s, nil
			}
		}
		l.mu.Unlock()
		announce := d
		if !known {
			announce = 2 * d
		}
		protocol.NoticeWait(ctx, announce)
		t := time.NewTimer(d)
		select {
		case <-w.wake:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		l.mu.Lock()
		if err := ctx.Err(); err != nil {
			l.leave(w)
			l.mu.Unlock()
			return nil, err
		}
	}
}

// delay says how long the head of the queue, a request of tokens, must still wait:
// the pause, then the in-flight limit (an unknown wait), then the buckets. held means
// it waits for pacing or the window rather than a pause.
func (l *Limiter) delay(now time.Time, w *waiter) (d time.Duration, known, held bool) {
	tokens := w.tokens
	if l.until.After(now) {
		return l.until.Sub(now), true, false
	}
	if !w.nested && l.window > 0 && l.inflight >= l.maxInflight() {
		l.fullAt = l.admitted
		return announceEvery, false, true
	}
	d = max(l.requests.wait(now, 1), l.tokens.wait(now, float64(tokens)))
	return d, true, d > 0
}

// maxInflight is the number of requests the window lets be in flight.
func (l *Limiter) maxInflight() int { return max(1, int(l.window)) }

// admit starts the head request w.
func (l *Limiter) admit(now time.Time, w *waiter) *Slot {
	l.queue = l.queue[1:]
	l.requests.take(now, 1)
	l.tokens.take(now, float64(w.tokens))
	l.admitted++
	l.spent += w.tokens
	l.inflight++
	if l.window > 0 && l.inflight >= l.maxInflight() {
		l.fullAt = l.admitted
	}
	l.wakeHead()
	if len(l.queue) == 0 {
		l.hold(now, false)
	}
	return &Slot{l: l, seq: l.admitted, spent: l.spent, at: now}
}

// leave drops w from the queue, its context ended.
func (l *Limiter) leave(w *waiter) {
	for i, q := range l.queue {
		if q == w {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			break
		}
	}
	if len(l.queue) == 0 {
		l.hold(l.now(), false)
	}
	l.wakeHead()
}

// wakeHead tells the head of the queue that it may be admitted now.
func (l *Limiter) wakeHead() {
	if len(l.queue) == 0 {
		return
	}
	select {
	case l.queue[0].wake <- struct{}{}:
	default:
	}
}

// hold records whether the head of the queue is held by pacing or the window now.
func (l *Limiter) hold(now time.Time, held bool) {
	switch {
	case held && l.pacedFrom.IsZero():
		l.pacedFrom = now
	case !held && !l.pacedFrom.IsZero():
		l.paced += now.Sub(l.pacedFrom)
		l.pacedFrom = time.Time{}
	}
}

// Pause holds back new requests for d from now, extending a pause already running.
func (l *Limiter) Pause(d time.Duration) {
	if l == nil || d <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	end := now.Add(d)
	if !end.After(l.until) {
		return
	}
	start := now
	if l.until.After(now) {
		start = l.until
	}
	l.throttled += end.Sub(start)
	l.until = end
	l.pauses++
	l.wakeHead() // to announce the longer wait
}

// Throttled returns how long the endpoint has been paused in total, and how many
// times a pause was started or extended.
func (l *Limiter) Throttled() (time.Duration, int) {
	if l == nil {
		return 0, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.throttled, l.pauses
}

// Paced returns how long requests were held back, in total, by the endpoint's
// rate-limit headers or by its in-flight limit: the time during which the next request
// waited for either (a pause counts in Throttled instead).
func (l *Limiter) Paced() time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.paced
	if !l.pacedFrom.IsZero() {
		p += l.now().Sub(l.pacedFrom)
	}
	return p
}

// Window returns the in-flight limit, 0 while there is none.
func (l *Limiter) Window() float64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.window
}

// Outcome is how a request ended, as its limiter counts it.
type Outcome int

const (
	// Succeeded is a success: it grows the in-flight limit while that binds.
	Succeeded Outcome = iota + 1
	// RateLimited is a rate limit: it shrinks the in-flight limit.
	RateLimited
	// Unjudged is any other end (another failure, a consumer that stopped reading),
	// which says nothing about the endpoint's capacity.
	Unjudged
)

// Slot is one admitted request. A nil *Slot (from a nil Limiter) does nothing.
type Slot struct {
	l     *Limiter
	seq   uint64    // its admission
	spent int64     // the tokens admitted up to and including it
	at    time.Time // when it was admitted, which is when the server counts it
	ended bool
}

// Observe takes the rate-limit headers of the request's response.
func (s *Slot) Observe(h http.Header) {
	if s == nil {
		return
	}
	rh := parseRateHeaders(h, s.l.now())
	if !rh.requests.ok && !rh.tokens.ok {
		return
	}
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.seq <= l.synced {
		return // the buckets hold a later state of the endpoint already
	}
	l.synced = s.seq
	now := l.now()
	l.requests.sync(rh.requests, now, now.Sub(s.at), float64(l.admitted-s.seq))
	l.tokens.sync(rh.tokens, now, now.Sub(s.at), float64(l.spent-s.spent))
	l.wakeHead()
}

// End releases the slot with the request's outcome; later calls do nothing.
func (s *Slot) End(o Outcome) {
	if s == nil || s.ended {
		return
	}
	s.ended = true
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	switch o {
	case RateLimited:
		// One cut per round: the requests admitted before the last cut met the same
		// congestion, and the cut already answered it.
		if s.seq > l.cutAfter {
			from := l.window
			if from == 0 {
				from = float64(l.inflight)
			}
			l.window = max(1, from/2)
			l.threshold = max(l.threshold, from/2)
			l.cutAfter = l.admitted
		}
	case Succeeded:
		switch {
		case l.window == 0 || s.seq > l.fullAt:
		case l.window < l.threshold:
			l.window = min(l.window+1, l.threshold)
		default:
			l.window += 1 / l.window // a whole request more once a window of them succeeded
		}
	case Unjudged:
	}
	l.inflight--
	l.wakeHead()
}

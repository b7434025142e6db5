// Package transport streams model responses over HTTP: it owns retries, backoff,
// timeouts and error classification, and leaves each provider's wire format to a
// Dialect.
package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// Dialect is one provider's wire format.
type Dialect interface {
	// NewRequest builds the HTTP request (URL, headers, body) for req.
	NewRequest(ctx context.Context, req protocol.Request) (*http.Request, error)
	// NewDecoder returns a decoder of one successful streaming response body.
	NewDecoder(body io.Reader) Decoder
	// ErrorMessage extracts a readable message and the provider's error type word
	// from a non-2xx response body; it returns "" when the body has no known shape.
	ErrorMessage(body []byte) (msg, typ string)
}

// Relaxer is a Dialect with optional request settings that some compatible servers
// refuse: given a request that failed with te, it returns the request without the
// setting te blames and the setting's name, or ok false when there is none to drop.
// The client then sends the relaxed request once, announced by a retry.
type Relaxer interface {
	Relax(req protocol.Request, te *Error) (relaxed protocol.Request, dropped string, ok bool)
}

// Decoder turns one response body into messages, Scanner-shaped. After a clean end it
// has yielded exactly one KindStop and Err returns nil; otherwise Err says why the
// stream is incomplete, preferably as an *Error. The SSE formats' decoders embed an
// EventDecoder, which makes one of an event switch.
type Decoder interface {
	Next() bool
	Message() protocol.Message
	Err() error
}

// PartialUsager is a Decoder that can tell the usage reported before its stream
// failed.
type PartialUsager interface {
	PartialUsage() protocol.Usage
}

// Limited is a Decoder that bounds what it accumulates of one response: it fails with
// an *Error of Kind protocol.ErrTooLarge once a tool input passes its limit, holding no
// more of it, and its SSE lines are bounded to match. The Client calls SetLimits
// before the first Next.
type Limited interface {
	SetLimits(l protocol.Limits)
}

// MaxLine is the longest SSE line, and the longest data of one event, a decoder
// accepts under limits l: room for the larger limit twice over (JSON escaping) and the
// event's envelope.
func MaxLine(l protocol.Limits) int {
	l = l.WithDefaults()
	return int(2*max(l.MaxResponseBytes, l.MaxToolInputBytes) + 64<<10)
}

// TooLarge is the error of a response that passed one of its limits; setting names
// the spec field.
func TooLarge(what string, limit int64, setting string) *Error {
	return &Error{Kind: protocol.ErrTooLarge, ShouldRetry: RetryNo,
		Message: fmt.Sprintf("response too large: %s passed %d bytes (limits.%s)", what, limit, setting)}
}

// Options tune a Client. Zero values take the defaults in brackets.
type Options struct {
	// MaxAttempts bounds the attempts of one request, the first included [4].
	MaxAttempts int
	// MaxWait bounds the total backoff time of one request [2m].
	MaxWait time.Duration
	// BaseDelay and MaxDelay shape the exponential backoff [500ms, 8s].
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter is the longest server-requested delay honoured; a longer one ends
	// the request with its error [60s].
	MaxRetryAfter time.Duration
	// ConnectTimeout bounds dialing [10s]; HeaderTimeout the wait for response
	// headers [2m]; IdleTimeout the silence before the response headers and between two
	// reads of the body [5m].
	ConnectTimeout, HeaderTimeout, IdleTimeout time.Duration
	// Limiter, when set, is shared by every client of one endpoint: a rate limit seen
	// by one pauses them all.
	Limiter *Limiter
	// HTTP replaces the default HTTP client; its Transport should still have timeouts.
	HTTP *http.Client
	// Activity, when set, is called whenever bytes arrive (liveness for watchdogs).
	Activity func()
	// Jitter returns a number in [0,1) [math/rand/v2].
	Jitter func() float64
	// Now is the clock [time.Now].
	Now func() time.Time
}

func (o *Options) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 4
	}
	set(&o.MaxWait, 2*time.Minute)
	set(&o.BaseDelay, 500*time.Millisecond)
	set(&o.MaxDelay, 8*time.Second)
	set(&o.MaxRetryAfter, 60*time.Second)
	set(&o.ConnectTimeout, 10*time.Second)
	set(&o.HeaderTimeout, 2*time.Minute)
	set(&o.IdleTimeout, 5*time.Minute)
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Activity == nil {
		o.Activity = func() {}
	}
}

// Client streams responses of one provider endpoint, or of an in-process model
// (NewLocal). It is safe for concurrent use.
type Client struct {
	dialect Dialect
	http    *http.Client
	local   Local // set instead of dialect and http by NewLocal
	opts    Options
}

// NewClient returns a client speaking dialect.
func NewClient(dialect Dialect, opts Options) *Client {
	opts.defaults()
	hc := opts.HTTP
	if hc == nil {
		hc = NewHTTPClient(opts)
	}
	return &Client{dialect: dialect, http: hc, opts: opts}
}

// NewHTTPClient returns an HTTP client with the connect and response-header timeouts
// of opts (or their defaults), meant to be shared (Options.HTTP) by every client of one
// endpoint so that they pool their connections.
func NewHTTPClient(opts Options) *http.Client {
	opts.defaults()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: opts.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = opts.HeaderTimeout
	tr.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: tr}
}

// CloseIdleConnections closes kept-alive connections (tests call it before leak checks).
func (c *Client) CloseIdleConnections() {
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
}

// errIdle is the cancel cause of an attempt whose body went silent.
var errIdle = errors.New("no bytes received within the idle timeout")

// Stream sends req and yields the response's messages as they arrive: deltas, complete
// tool calls, usage, and one stop. A failure ends the sequence with one KindError
// message. Before every retry it yields a KindRetry message; whatever the consumer
// received since the last retry (or the start) belongs to the abandoned attempt.
func (c *Client) Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
	return func(yield func(protocol.Message) bool) {
		var waited time.Duration
		for attempt := 1; ; attempt++ {
			te, partial, stopped := c.attempt(ctx, req, yield)
			if stopped || te == nil {
				return
			}
			if ctx.Err() != nil {
				yield(protocol.Message{Kind: protocol.KindError, Err: protocol.CancelError(ctx)})
				return
			}
			delay, ok := c.retryDelay(te, attempt, waited)
			if !ok {
				if rx, can := c.dialect.(Relaxer); can {
					if relaxed, dropped, ok := rx.Relax(req, te); ok {
						req = relaxed
						if !yield(protocol.Message{Kind: protocol.KindRetry, Attempt: attempt,
							Reason: string(te.Kind) + ": the server refused " + dropped + "; sending the request once more without it: " + te.Message}) {
							return
						}
						continue
					}
				}
				// No retry will help: the usage of the failed attempt is kept.
				if partial != (protocol.Usage{}) && !yield(protocol.Message{Kind: protocol.KindUsage, Usage: partial}) {
					return
				}
				yield(protocol.Message{Kind: protocol.KindError, Err: te.Protocol()})
				return
			}
			if te.Kind == protocol.ErrRateLimit || te.Kind == protocol.ErrOverloaded {
				c.opts.Limiter.Pause(delay)
			}
			if !yield(protocol.Message{Kind: protocol.KindRetry, Attempt: attempt, DelayMS: delay.Milliseconds(),
				Reason: string(te.Kind) + ": " + te.Message}) {
				return
			}
			waited += delay
			if err := protocol.Sleep(ctx, delay); err != nil {
				yield(protocol.Message{Kind: protocol.KindError, Err: protocol.CancelError(ctx)})
				return
			}
		}
	}
}

// retryDelay decides whether a failed attempt is retried and after how long.
func (c *Client) retryDelay(te *Error, attempt int, waited time.Duration) (time.Duration, bool) {
	if !te.Retryable() || attempt >= c.opts.MaxAttempts {
		return 0, false
	}
	var delay time.Duration
	if te.RetryAfter > 0 {
		if te.RetryAfter > c.opts.MaxRetryAfter {
			return 0, false
		}
		delay = te.RetryAfter
	} else {
		base := c.opts.BaseDelay << (attempt - 1)
		if base > c.opts.MaxDelay || base <= 0 {
			base = c.opts.MaxDelay
		}
		delay = base - time.Duration(float64(base)*0.25*c.opts.Jitter())
	}
	if waited+delay > c.opts.MaxWait {
		return 0, false
	}
	return delay, true
}

// attempt makes one HTTP request, admitted by the limiter, and yields its messages.
// stopped means the consumer asked to stop. The error is classified, and the
// credentials the request carried are redacted from its message; partial is the usage
// a failed stream reported before it failed (see PartialUsager).
func (c *Client) attempt(ctx context.Context, req protocol.Request, yield func(protocol.Message) bool) (err *Error, partial protocol.Usage, stopped bool) {
	if c.local != nil {
		return c.localAttempt(ctx, req, yield)
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hreq, rerr := c.dialect.NewRequest(actx, req)
	if rerr != nil {
		return &Error{Kind: protocol.ErrRequest, Message: rerr.Error(), ShouldRetry: RetryNo}, partial, false
	}
	if req.Parent != "" && validHeaderValue(req.Parent) {
		hreq.Header.Set(protocol.ParentHeader, req.Parent)
	}
	acquire := c.opts.Limiter.Acquire
	if req.Parent != "" {
		acquire = c.opts.Limiter.AcquireNested
	}
	slot, aerr := acquire(ctx, estimateTokens(hreq))
	if aerr != nil {
		ce := protocol.CancelError(ctx)
		return &Error{Kind: ce.Kind, Message: ce.Message, ShouldRetry: RetryNo}, partial, false
	}
	defer func() { slot.End(outcome(err, stopped)) }()
	r := newRedactor(hreq)
	// The idle timer runs from the start: a server that accepts the request and then
	// sends nothing, not even headers, is as silent as a stalled body.
	timer := time.AfterFunc(c.opts.IdleTimeout, func() { cancel(errIdle) })
	defer timer.Stop()
	resp, rerr := c.http.Do(hreq)
	timer.Stop()
	if rerr != nil {
		return r.redact(c.failure(actx, rerr, "send request")), partial, false
	}
	defer func() { _ = resp.Body.Close() }() // a response body: nothing is lost on close
	c.opts.Activity()
	slot.Observe(resp.Header)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := c.responseError(resp, c.dialect.ErrorMessage)
		if resp.StatusCode == http.StatusNotFound {
			e.Message += " (no such endpoint: " + hreq.Method + " " + requestURL(hreq.URL) + "; check the base URL)"
		}
		return r.redact(e), partial, false
	}
	protocol.NoticeStart(ctx) // the answer has begun
	head := &headReader{r: &idleReader{r: resp.Body, idle: c.opts.IdleTimeout, activity: c.opts.Activity, timer: timer}}
	dec := c.dialect.NewDecoder(head)
	lim := req.Limits.WithDefaults()
	if ld, ok := dec.(Limited); ok {
		ld.SetLimits(lim)
	}
	// The text and thinking are counted as they pass: the consumer streams them on, so
	// nothing here holds them, and a runaway answer ends at the limit.
	var size int64
	yielded := false
	for dec.Next() {
		yielded = true
		m := dec.Message()
		if e := countResponse(&size, m, lim); e != nil {
			return e, c.partial(dec), false
		}
		if !yield(m) {
			return nil, partial, true
		}
	}
	if derr := dec.Err(); derr != nil {
		e := c.failure(actx, derr, "read stream")
		if !yielded {
			e = describeBody(e, resp, head.head)
		}
		return r.redact(e), c.partial(dec), false
	}
	return nil, partial, false
}

// validHeaderValue reports whether net/http sends v as a header value: a tool-call id
// of another server may hold anything, and a request must not fail for the header.
func validHeaderValue(v string) bool {
	for _, b := range []byte(v) {
		if b < ' ' && b != '\t' || b == 0x7f {
			return false
		}
	}
	return true
}

// responseError classifies a non-2xx response: its status, its retry headers, and the
// message and error type that errorMessage reads from its body.
func (c *Client) responseError(resp *http.Response, errorMessage func(body []byte) (msg, typ string)) *Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)) // best effort: the status is the error
	msg, typ := errorMessage(body)
	e := statusError(resp, body, msg, c.opts.Now())
	if k := protocol.KindForType(typ); k == protocol.ErrOverloaded && e.Kind == protocol.ErrServer {
		e.Kind = k
	}
	return e
}

// countResponse adds the text and thinking of m to size and returns the error of a
// response that passed its limit, nil while it has not.
func countResponse(size *int64, m protocol.Message, lim protocol.Limits) *Error {
	if m.Kind != protocol.KindText && m.Kind != protocol.KindThinking {
		return nil
	}
	*size += int64(len(m.Text) + len(m.Redacted))
	if *size > lim.MaxResponseBytes {
		return TooLarge("text and thinking", lim.MaxResponseBytes, "max_response_bytes")
	}
	return nil
}

// estimateTokens guesses what a request counts against a tokens-per-minute limit, for
// pacing: a token for every four bytes of its body.
func estimateTokens(r *http.Request) int64 { return max(r.ContentLength, 0) / 4 }

// outcome is how an attempt ended for its limiter: a rate limit shrinks the endpoint's
// in-flight limit. An overload does not: it says the provider is busy, not that this
// client sends too much, and the pause it causes already holds everyone back.
func outcome(err *Error, stopped bool) Outcome {
	switch {
	case err == nil && !stopped:
		return Succeeded
	case err != nil && err.Kind == protocol.ErrRateLimit:
		return RateLimited
	}
	return Unjudged
}

// partial returns the usage dec reported before it failed, if it can tell.
func (c *Client) partial(dec Decoder) protocol.Usage {
	if pu, ok := dec.(PartialUsager); ok {
		return pu.PartialUsage()
	}
	return protocol.Usage{}
}

// failure classifies an error of one attempt. An idle timeout comes first: the decoder
// may have wrapped the read error it caused.
func (c *Client) failure(actx context.Context, err error, op string) *Error {
	if errors.Is(context.Cause(actx), errIdle) {
		return &Error{Kind: protocol.ErrInactivity, Message: fmt.Sprintf("%s: %v", op, errIdle)}
	}
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: protocol.ErrTimeout, Message: fmt.Sprintf("%s: %v", op, err)}
	}
	return &Error{Kind: protocol.ErrNetwork, Message: fmt.Sprintf("%s: %v", op, err)}
}

// idleReader arms an idle timer only while a Read is blocked, so time the consumer
// spends between reads (running a tool) never counts as silence.
type idleReader struct {
	r        io.Reader
	idle     time.Duration
	timer    *time.Timer
	activity func()
}

func (r *idleReader) Read(p []byte) (int, error) {
	r.timer.Reset(r.idle)
	n, err := r.r.Read(p)
	r.timer.Stop()
	if n > 0 {
		r.activity()
	}
	return n, err
}

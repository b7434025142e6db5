package transport

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/textcut"
)

// Error is a classified transport failure. Kind is one of the protocol error kinds.
type Error struct {
	Kind protocol.ErrorKind
	// Status is the HTTP status, or 0 when no response arrived (or the failure came
	// after a 200, mid-stream).
	Status int
	// Message says what happened, for people. It never contains the API key.
	Message string
	// RetryAfter is the delay the server asked for, 0 when it gave none.
	RetryAfter time.Duration
	// ShouldRetry is the server's x-should-retry verdict, or this package's own
	// verdict on a failure no retry can repair; it overrides the Kind's rule.
	ShouldRetry RetryVerdict
}

// RetryVerdict says whether the same request may be made again, overriding what the
// error's Kind says: the server's x-should-retry header, or a failure (a request
// that cannot be built, a response past its limits) that a retry would only repeat.
type RetryVerdict int

const (
	// RetryUnsaid leaves the decision to the error's Kind.
	RetryUnsaid RetryVerdict = iota
	// RetryYes says to retry, whatever the Kind.
	RetryYes
	// RetryNo says not to retry, whatever the Kind.
	RetryNo
)

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// Retryable reports whether the same request may succeed if made again.
func (e *Error) Retryable() bool {
	switch e.ShouldRetry {
	case RetryYes:
		return true
	case RetryNo:
		return false
	case RetryUnsaid:
	}
	return protocol.Error{Kind: e.Kind}.Retryable()
}

// Protocol returns e as a protocol error.
func (e *Error) Protocol() protocol.Error {
	return protocol.Error{Kind: e.Kind, Message: e.Message}
}

// retryAfter reads the server's requested delay: retry-after-ms (milliseconds, may be
// fractional), then retry-after as seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// shouldRetry reads the server's x-should-retry header: "true" or "false", any case.
func shouldRetry(h http.Header) RetryVerdict {
	switch strings.ToLower(strings.TrimSpace(h.Get("X-Should-Retry"))) {
	case "true":
		return RetryYes
	case "false":
		return RetryNo
	}
	return RetryUnsaid
}

// maxBody is how many bytes of an error body a message keeps.
const maxBody = 2000

// clipBody shortens an error body for messages: trimmed, at most maxBody bytes cut at a
// character boundary, and valid UTF-8.
func clipBody(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(empty)"
	}
	return strings.ToValidUTF8(textcut.Clip(s, maxBody, textcut.Ellipsis), "\uFFFD")
}

// statusError builds the error for a non-2xx response.
func statusError(resp *http.Response, body []byte, msg string, now time.Time) *Error {
	kind := protocol.KindForStatus(resp.StatusCode)
	if msg == "" {
		msg = clipBody(body)
	}
	return &Error{
		Kind:        kind,
		Status:      resp.StatusCode,
		Message:     fmt.Sprintf("HTTP %d: %s", resp.StatusCode, msg),
		RetryAfter:  retryAfter(resp.Header, now),
		ShouldRetry: shouldRetry(resp.Header),
	}
}

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
	Kind string
	// Status is the HTTP status, or 0 when no response arrived (or the failure came
	// after a 200, mid-stream).
	Status int
	// Message says what happened, for people. It never contains the API key.
	Message string
	// RetryAfter is the delay the server asked for, 0 when it gave none.
	RetryAfter time.Duration
	// ShouldRetry is the server's x-should-retry verdict: 1 yes, -1 no, 0 none.
	ShouldRetry int
}

func (e *Error) Error() string { return e.Kind + ": " + e.Message }

// Retryable reports whether the same request may succeed if made again.
func (e *Error) Retryable() bool {
	switch e.ShouldRetry {
	case 1:
		return true
	case -1:
		return false
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

func shouldRetry(h http.Header) int {
	switch strings.ToLower(strings.TrimSpace(h.Get("X-Should-Retry"))) {
	case "true":
		return 1
	case "false":
		return -1
	}
	return 0
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

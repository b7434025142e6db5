package scripted

import (
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"maps"
	"net/http"

	"github.com/agentrun/agentrun/protocol"
)

// AttemptError is why an in-process attempt (Model.Attempt) failed.
type AttemptError struct {
	// Err is the failure as the HTTP transport classifies it.
	Err protocol.Error
	// status, header and body are the error response of a status fault, as the
	// handler sends it in the Anthropic format; status is 0 for every other failure.
	status int
	header http.Header
	body   []byte
}

func (e *AttemptError) Error() string { return string(e.Err.Kind) + ": " + e.Err.Message }

// Protocol returns the failure as the HTTP transport classifies it.
func (e *AttemptError) Protocol() protocol.Error { return e.Err }

// HTTPResponse returns the error response a status fault answers with over HTTP, a new
// one on every call, or nil when the failure is not a status fault. A transport that
// classifies it the way it classifies HTTP responses (with ErrorMessage for the body)
// treats the fault as it would over HTTP: its retry-after, retry-after-ms and
// x-should-retry headers included.
func (e *AttemptError) HTTPResponse() *http.Response {
	if e.status == 0 {
		return nil
	}
	return &http.Response{StatusCode: e.status, Status: http.StatusText(e.status), Header: maps.Clone(e.header),
		Body: io.NopCloser(bytes.NewReader(e.body)), ContentLength: int64(len(e.body))}
}

// ErrorMessage reads the message and error type of an error body, in the Anthropic or
// the OpenAI shape (AttemptError.HTTPResponse).
func (m *Model) ErrorMessage(body []byte) (msg, typ string) { return bodyMessage(body) }

// Attempt makes one in-process attempt of req: it yields what a correct decoder of the
// HTTP form yields (text and thinking deltas, a KindThinking carrying only the
// Signature at the end of the thinking block, one KindToolCall per call, one KindUsage
// and one KindStop) and returns nil, or nil as soon as yield returns false. A failing
// attempt (a scripted fault) yields the partial output, if any, and returns an
// *AttemptError; a panic fault panics. Attempts are counted per session, identified by
// a hash of req, so making the same request again is its next attempt. FirstByte and
// ChunkDelay are honoured; cancelling ctx ends the attempt with an *AttemptError of
// protocol.CancelError.
func (m *Model) Attempt(ctx context.Context, req protocol.Request, yield func(protocol.Message) bool) error {
	r := m.respond(req, "", func() string { return requestKey(req) })
	if r.fault != nil && r.fault.Kind == FaultPanic {
		panic("scripted: " + r.fault.Message)
	}
	if err := protocol.Sleep(ctx, m.opts.FirstByte); err != nil {
		return &AttemptError{Err: protocol.CancelError(ctx)}
	}
	if r.fault != nil && r.fault.Kind == FaultStatus {
		h, body := faultResponse(formatAnthropic, r.fault, "")
		return &AttemptError{Err: statusFailure(r.fault), status: r.fault.Status, header: h, body: body}
	}
	ticks := 0
	for _, u := range r.sent(m.opts.ChunkRunes) {
		for range u.ticks() {
			if ticks > 0 {
				if err := protocol.Sleep(ctx, m.opts.ChunkDelay); err != nil {
					return &AttemptError{Err: protocol.CancelError(ctx)}
				}
			}
			ticks++
		}
		if !yield(r.message(u)) {
			return nil
		}
	}
	if r.fault != nil {
		return &AttemptError{Err: midStreamFailure(r.fault)}
	}
	if !yield(protocol.Message{Kind: protocol.KindUsage, Usage: r.usage}) {
		return nil
	}
	yield(protocol.Message{Kind: protocol.KindStop, Stop: r.stop})
	return nil
}

// Stream answers req in-process with one attempt (Attempt), a failure ending the
// sequence with one KindError classified the way the HTTP transport classifies it. It
// makes no retries: a transport that retries in-process attempts as it retries HTTP
// ones calls Attempt.
func (m *Model) Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
	return func(yield func(protocol.Message) bool) {
		stopped := false
		err := m.Attempt(ctx, req, func(msg protocol.Message) bool {
			if !yield(msg) {
				stopped = true
				return false
			}
			return true
		})
		var ae *AttemptError
		if errors.As(err, &ae) && !stopped {
			yield(protocol.Message{Kind: protocol.KindError, Err: ae.Err})
		}
	}
}

package transport

import (
	"context"
	"errors"
	"net/http"

	"github.com/agentrun/agentrun/protocol"
)

// Local is an in-process model, such as the scripted one: the counterpart of a Dialect
// and its HTTP round trip. A Client made by NewLocal puts each of its attempts through
// the same retry loop, backoff, limiter, response limits and error classification as
// the HTTP attempts of NewClient, so that a failure behaves the same in process as
// over HTTP.
type Local interface {
	// Attempt makes one attempt of req, yielding the messages a Decoder of the HTTP
	// form would, and returns nil when the attempt ended with its stop or yield
	// returned false, else why it failed. A failure with an HTTPResponse method
	// returning a response (an error status before any output) is classified as that
	// response would be over HTTP, with ErrorMessage reading its body; one with a
	// Protocol method keeps the kind and message it returns; any other is a network
	// error.
	Attempt(ctx context.Context, req protocol.Request, yield func(protocol.Message) bool) error
	// ErrorMessage extracts a readable message and the error type word from the body
	// of such a response, as Dialect.ErrorMessage does.
	ErrorMessage(body []byte) (msg, typ string)
}

// The forms of a Local's failures (Local.Attempt).
type (
	responseFailure interface{ HTTPResponse() *http.Response }
	protocolFailure interface{ Protocol() protocol.Error }
)

// NewLocal returns a client of the in-process model l. Of opts, the HTTP, timeout and
// Relaxer settings do not apply.
func NewLocal(l Local, opts Options) *Client {
	opts.defaults()
	return &Client{local: l, opts: opts}
}

// localAttempt makes one attempt of the in-process model, as attempt makes one HTTP
// request.
func (c *Client) localAttempt(ctx context.Context, req protocol.Request, yield func(protocol.Message) bool) (*Error, protocol.Usage, bool) {
	lim := req.Limits.WithDefaults()
	var (
		size     int64
		tooLarge *Error
		stopped  bool
	)
	err := c.local.Attempt(ctx, req, func(m protocol.Message) bool {
		c.opts.Activity()
		if tooLarge = countResponse(&size, m, lim); tooLarge != nil {
			return false
		}
		if !yield(m) {
			stopped = true
			return false
		}
		return true
	})
	switch {
	case stopped:
		return nil, protocol.Usage{}, true
	case tooLarge != nil:
		return tooLarge, protocol.Usage{}, false
	case err == nil:
		return nil, protocol.Usage{}, false
	}
	var rf responseFailure
	if errors.As(err, &rf) {
		if resp := rf.HTTPResponse(); resp != nil {
			defer func() { _ = resp.Body.Close() }() // an in-memory error body
			return c.responseError(resp, c.local.ErrorMessage), protocol.Usage{}, false
		}
	}
	var pf protocolFailure
	if errors.As(err, &pf) {
		p := pf.Protocol()
		return &Error{Kind: p.Kind, Message: p.Message}, protocol.Usage{}, false
	}
	return &Error{Kind: protocol.ErrNetwork, Message: err.Error()}, protocol.Usage{}, false
}

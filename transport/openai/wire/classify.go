package wire

import (
	"strings"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
)

// Kind classifies e into a protocol error kind, the one rule for the whole OpenAI
// family (Chat Completions and Responses, error bodies, chunks and events alike): an
// HTTP status code first, then the code word, then the type word; an error nothing
// classifies is a server error.
//
// The code wins over the type because OpenAI uses the type as a broad family and the
// code for the actual cause (wire-formats B.9): a bad key comes as type
// invalid_request_error with code invalid_api_key (auth, not a bad request), a rate
// limit as type requests or tokens with code rate_limit_exceeded. The Responses API's
// response.failed and error events often carry only a code. A code this rule does not
// know leaves the decision to the type.
func (e APIError) Kind() protocol.ErrorKind {
	if e.Status != 0 {
		return protocol.KindForStatus(e.Status)
	}
	if k := protocol.KindForType(e.Code); k != "" {
		return k
	}
	if k := protocol.KindForType(e.Type); k != "" {
		return k
	}
	return protocol.ErrServer
}

// TransportError returns e as a mid-stream transport error of e.Kind(). Its message is
// the server's; without one it is fallback (what arrived: "error event", "response
// failed", ...) followed by the type and code words the server gave.
func (e APIError) TransportError(fallback string) *transport.Error {
	msg := e.Message
	if msg == "" {
		words := e.Type
		if e.Code != "" && e.Code != e.Type {
			words = strings.TrimSpace(words + " " + e.Code)
		}
		msg = fallback
		if words != "" {
			msg += ": " + words
		}
	}
	return &transport.Error{Kind: e.Kind(), Message: msg}
}

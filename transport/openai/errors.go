package openai

import (
	"strings"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/openai/wire"
)

// isError reports whether a chunk is an error payload rather than output.
func (c *chunk) isError() bool { return wire.Truthy(c.Error) || c.Object == "error" }

// errorKind classifies e: an HTTP status code first, then the type word, then a string
// code; an error nothing classifies is a server error.
func errorKind(e wire.APIError) protocol.ErrorKind {
	if e.Status != 0 {
		return protocol.KindForStatus(e.Status)
	}
	if k := protocol.KindForType(e.Type); k != "" {
		return k
	}
	if k := protocol.KindForType(e.Code); k != "" {
		return k
	}
	return protocol.ErrServer
}

// transportError returns e as a mid-stream transport error.
func transportError(e wire.APIError) *transport.Error {
	msg := e.Message
	if msg == "" {
		msg = strings.TrimSpace(e.Type + " " + e.Code)
	}
	if msg == "" {
		msg = "error without a message"
	}
	return &transport.Error{Kind: errorKind(e), Message: msg}
}

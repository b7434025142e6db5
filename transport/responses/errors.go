package responses

import (
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/openai/wire"
)

// transportError classifies e, reported in an error body, a response.failed event or
// an error event: an HTTP status code first, then the code word, then the type word;
// what nothing classifies is a server error. fallback is the message when the server
// gave none.
func transportError(e wire.APIError, fallback string) *transport.Error {
	kind := protocol.ErrServer
	switch {
	case e.Status != 0:
		kind = protocol.KindForStatus(e.Status)
	case protocol.KindForType(e.Code) != "":
		kind = protocol.KindForType(e.Code)
	case protocol.KindForType(e.Type) != "":
		kind = protocol.KindForType(e.Type)
	}
	msg := e.Message
	if msg == "" {
		msg = fallback
		if e.Code != "" {
			msg += ": " + e.Code
		}
	}
	return &transport.Error{Kind: kind, Message: msg}
}

package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// anthropicType is the Anthropic error type of an HTTP status.
func anthropicType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// openaiType is the OpenAI error type and code of an HTTP status.
func openaiType(status int) (typ, code string) {
	switch {
	case status == 401:
		return "invalid_request_error", "invalid_api_key"
	case status == 429:
		return "requests", "rate_limit_exceeded"
	case status == 529:
		return "overloaded_error", "overloaded"
	case status >= 500:
		return "server_error", "server_error"
	}
	return "invalid_request_error", ""
}

// statusText is the default message of a status fault.
func statusText(status int) string {
	text := http.StatusText(status)
	switch {
	case status == 529:
		text = "Overloaded"
	case text == "":
		text = "Error"
	}
	return text + " (scripted fault)"
}

// errorEventMessage is the message of a mid-stream error event of type typ.
func errorEventMessage(typ string) string {
	if typ == "overloaded_error" {
		return "Overloaded (scripted fault)"
	}
	return strings.ReplaceAll(typ, "_", " ") + " (scripted fault)"
}

type anthropicErrorBody struct {
	Type      string              `json:"type"`
	Error     anthropicErrorValue `json:"error"`
	RequestID string              `json:"request_id,omitempty"`
}

type anthropicErrorValue struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type openaiErrorBody struct {
	Error openaiErrorValue `json:"error"`
}

type openaiErrorValue struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// errorBody is the HTTP error body of format f.
func errorBody(f format, status int, msg, requestID string) []byte {
	var (
		b   []byte
		err error
	)
	if f == formatAnthropic {
		b, err = json.Marshal(anthropicErrorBody{Type: "error", Error: anthropicErrorValue{Type: anthropicType(status), Message: msg},
			RequestID: requestID})
	} else {
		typ, code := openaiType(status)
		e := openaiErrorValue{Message: msg, Type: typ}
		if code != "" {
			e.Code = &code
		}
		b, err = json.Marshal(openaiErrorBody{Error: e})
	}
	if err != nil {
		panic("scripted: marshal error body: " + err.Error()) // plain strings always marshal
	}
	return b
}

// statusFailure is the error the transport reports for a status fault.
func statusFailure(f *Fault) protocol.Error {
	kind := protocol.KindForStatus(f.Status)
	msg, typ := statusText(f.Status), ""
	if f.Body != "" {
		msg, typ = bodyMessage([]byte(f.Body))
	}
	if kind == protocol.ErrServer && protocol.KindForType(typ) == protocol.ErrOverloaded {
		kind = protocol.ErrOverloaded
	}
	return protocol.Error{Kind: kind, Message: fmt.Sprintf("HTTP %d: %s", f.Status, msg)}
}

// bodyMessage reads the message and type of an error body in the Anthropic or OpenAI
// shape; a body of another shape is its own (trimmed) message.
func bodyMessage(body []byte) (msg, typ string) {
	var p struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &p) == nil && len(p.Error) > 0 {
		var s string
		if json.Unmarshal(p.Error, &s) == nil && s != "" {
			return s, ""
		}
		var o struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		}
		if json.Unmarshal(p.Error, &o) == nil && o.Message != "" {
			return o.Message, o.Type
		}
	}
	s := string(bytes.TrimSpace(body))
	if s == "" {
		s = "(empty)"
	}
	return s, ""
}

// midStreamFailure is the error the transport reports for a fault after the stream
// started.
func midStreamFailure(f *Fault) protocol.Error {
	switch f.Kind {
	case FaultCut:
		return protocol.Error{Kind: protocol.ErrNetwork, Message: "read stream: connection cut (scripted fault)"}
	case FaultStall:
		return protocol.Error{Kind: protocol.ErrInactivity, Message: "read stream: stream stalled (scripted fault)"}
	case FaultMalformed:
		return protocol.Error{Kind: protocol.ErrStream, Message: "read stream: malformed event (scripted fault)"}
	case FaultEOF:
		return protocol.Error{Kind: protocol.ErrStream, Message: "read stream: stream ended without its terminal event (scripted fault)"}
	case FaultErrorEvent:
		kind := protocol.KindForType(f.ErrorType)
		if kind == "" {
			kind = protocol.ErrServer // as the transport classifies an error event of an unknown type
		}
		return protocol.Error{Kind: kind, Message: errorEventMessage(f.ErrorType)}
	case FaultStatus, FaultPanic:
	}
	return protocol.Error{Kind: protocol.ErrInternal, Message: "scripted: fault " + f.Kind.String() + " is not a mid-stream fault"}
}

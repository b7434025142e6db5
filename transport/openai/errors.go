package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
)

// apiError is a provider error payload, whatever its shape (wire-formats §B.9).
type apiError struct {
	Message string
	Type    string
	// Code is a string code ("context_length_exceeded"); Status an integer code that
	// is an HTTP status (vLLM, OpenRouter).
	Code   string
	Status int
}

// errorPayload holds every member an error body may use.
type errorPayload struct {
	Error   json.RawMessage `json:"error"`
	Object  string          `json:"object"`
	Message json.RawMessage `json:"message"`
	Type    json.RawMessage `json:"type"`
	Code    json.RawMessage `json:"code"`
	Detail  json.RawMessage `json:"detail"`
}

type errorObject struct {
	Message json.RawMessage `json:"message"`
	Type    json.RawMessage `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// parseAPIError reads an error body: {"error":{...}}, {"error":"text"}, the flat
// {"object":"error",...} or {"detail":"text"}. ok is false for anything else.
func parseAPIError(body []byte) (e apiError, ok bool) {
	var p errorPayload
	if err := json.Unmarshal(bytes.TrimSpace(body), &p); err != nil {
		return apiError{}, false
	}
	switch {
	case truthy(p.Error):
		if s, isStr := jsonString(p.Error); isStr {
			return apiError{Message: s}, true
		}
		var o errorObject
		if err := json.Unmarshal(p.Error, &o); err != nil {
			return apiError{Message: clip(p.Error)}, true
		}
		return fromParts(o.Message, o.Type, o.Code), true
	case p.Object == "error":
		return fromParts(p.Message, p.Type, p.Code), true
	case truthy(p.Detail):
		if s, isStr := jsonString(p.Detail); isStr {
			return apiError{Message: s}, true
		}
		return apiError{Message: clip(p.Detail)}, true
	}
	return apiError{}, false
}

// isError reports whether a chunk is an error payload rather than output.
func (c *chunk) isError() bool { return truthy(c.Error) || c.Object == "error" }

func fromParts(msg, typ, code json.RawMessage) apiError {
	e := apiError{}
	e.Message, _ = jsonString(msg)
	e.Type, _ = jsonString(typ)
	if s, isStr := jsonString(code); isStr {
		e.Code = s
		if n, err := strconv.Atoi(s); err == nil && n >= 400 && n <= 599 {
			e.Status = n
		}
	} else if n, err := strconv.Atoi(string(bytes.TrimSpace(code))); err == nil && n >= 400 && n <= 599 {
		e.Status = n
	}
	return e
}

// kind classifies the error: an HTTP status code first, then the type word, then a
// string code; an error nothing classifies is a server error.
func (e apiError) kind() string {
	if e.Status != 0 {
		return transport.KindForStatus(e.Status)
	}
	if k := transport.KindForType(e.Type); k != "" {
		return k
	}
	if k := transport.KindForType(e.Code); k != "" {
		return k
	}
	return protocol.ErrServer
}

// transportError returns e as a mid-stream transport error.
func (e apiError) transportError() *transport.Error {
	msg := e.Message
	if msg == "" {
		msg = strings.TrimSpace(e.Type + " " + e.Code)
	}
	if msg == "" {
		msg = "error without a message"
	}
	return &transport.Error{Kind: e.kind(), Message: msg}
}

// truthy reports whether a raw JSON value is present and not null, false, 0, "", {}
// or [] (the test openai-python applies to "error").
func truthy(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", "false", "0", `""`, "{}", "[]":
		return false
	}
	return true
}

// jsonString decodes raw as a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// clip shortens raw bytes for an error message and makes them valid UTF-8.
func clip(b []byte) string {
	const max = 300
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

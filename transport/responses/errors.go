package responses

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
)

// apiError is an error reported by the server, in an error body, a response.failed
// event or an error event.
type apiError struct {
	Message string
	Type    string
	Code    string
	// Status is set when the code is an integer HTTP status.
	Status int
}

// errorObject is the JSON form of an error; code is a string, a number or null.
type errorObject struct {
	Message json.RawMessage `json:"message"`
	Type    json.RawMessage `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func (o errorObject) apiError() apiError {
	var e apiError
	e.Message, _ = jsonString(o.Message)
	e.Type, _ = jsonString(o.Type)
	code := bytes.TrimSpace(o.Code)
	if s, ok := jsonString(code); ok {
		e.Code = s
		code = []byte(s)
	}
	if n, err := strconv.Atoi(string(code)); err == nil && n >= 400 && n <= 599 {
		e.Status = n
	}
	return e
}

// parseAPIError reads an error body: {"error":{...}}, {"error":"text"} or the flat
// {"object":"error",...}. ok is false for anything else.
func parseAPIError(body []byte) (apiError, bool) {
	var p struct {
		Error  json.RawMessage `json:"error"`
		Object string          `json:"object"`
		errorObject
	}
	if err := json.Unmarshal(bytes.TrimSpace(body), &p); err != nil {
		return apiError{}, false
	}
	switch {
	case truthy(p.Error):
		if s, ok := jsonString(p.Error); ok {
			return apiError{Message: s}, true
		}
		var o errorObject
		if err := json.Unmarshal(p.Error, &o); err != nil {
			return apiError{Message: clip(p.Error)}, true
		}
		return o.apiError(), true
	case p.Object == "error":
		return p.errorObject.apiError(), true
	}
	return apiError{}, false
}

// transportError classifies e: an HTTP status code first, then the code word, then
// the type word; what nothing classifies is a server error. fallback is the message
// when the server gave none.
func (e apiError) transportError(fallback string) *transport.Error {
	kind := protocol.ErrServer
	switch {
	case e.Status != 0:
		kind = transport.KindForStatus(e.Status)
	case transport.KindForType(e.Code) != "":
		kind = transport.KindForType(e.Code)
	case transport.KindForType(e.Type) != "":
		kind = transport.KindForType(e.Type)
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

// truthy reports whether a raw JSON value is present and not null, false, 0, "", {}
// or [].
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

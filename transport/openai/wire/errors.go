// Package wire holds what the OpenAI Chat Completions and Responses dialects share on
// the wire: the error body shapes and their parsing, the request headers and tool
// schema defaults, and the helpers both decoders use to read raw JSON values and to
// recognise a 200 response whose body is a bare JSON error.
package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// APIError is an error reported by an OpenAI or OpenAI-compatible server, in an error
// body, an error chunk or an error event, whatever its shape.
type APIError struct {
	Message string
	Type    string
	// Code is a string code ("context_length_exceeded"); Status an integer code that
	// is an HTTP status, 400 to 599 (vLLM, OpenRouter).
	Code   string
	Status int
}

// TypeOrCode returns the error's type word, or its code when it has no type: the word
// a transport.Dialect's ErrorMessage reports.
func (e APIError) TypeOrCode() string {
	if e.Type != "" {
		return e.Type
	}
	return e.Code
}

// ErrorObject is the JSON form of an error: {"message","type","code"}, where code is
// a string, a number or null. Members of another JSON type are read as absent.
type ErrorObject struct {
	Message json.RawMessage `json:"message"`
	Type    json.RawMessage `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// APIError returns the error o describes. A code that is an integer from 400 to 599,
// as a number or as a string, is also its Status.
func (o ErrorObject) APIError() APIError {
	var e APIError
	e.Message, _ = JSONString(o.Message) // not a string: no message
	e.Type, _ = JSONString(o.Type)
	code := bytes.TrimSpace(o.Code)
	if s, ok := JSONString(code); ok {
		e.Code = s
		code = []byte(s)
	}
	if n, err := strconv.Atoi(string(code)); err == nil && n >= 400 && n <= 599 {
		e.Status = n
	}
	return e
}

// errorBody holds every member an error body may use.
type errorBody struct {
	Error  json.RawMessage `json:"error"`
	Object string          `json:"object"`
	ErrorObject
	Detail json.RawMessage `json:"detail"`
}

// ParseError reads an error body in one of the shapes the OpenAI API uses:
// {"error":{"message","type","code"}}, {"error":"text"} or the flat
// {"object":"error","message","type","code"}. ok is false for anything else; e is
// then the zero APIError.
func ParseError(body []byte) (e APIError, ok bool) {
	p, ok := decodeErrorBody(body)
	if !ok {
		return APIError{}, false
	}
	return p.apiError()
}

// ParseErrorOrDetail reads what ParseError reads and, besides, FastAPI's
// {"detail":"text"}, which vLLM and other compatible servers send for some failures.
// ok is false for anything else; e is then the zero APIError.
func ParseErrorOrDetail(body []byte) (e APIError, ok bool) {
	p, ok := decodeErrorBody(body)
	if !ok {
		return APIError{}, false
	}
	if e, ok := p.apiError(); ok {
		return e, true
	}
	if !Truthy(p.Detail) {
		return APIError{}, false
	}
	if s, isStr := JSONString(p.Detail); isStr {
		return APIError{Message: s}, true
	}
	return APIError{Message: Clip(p.Detail)}, true
}

func decodeErrorBody(body []byte) (errorBody, bool) {
	var p errorBody
	if err := json.Unmarshal(bytes.TrimSpace(body), &p); err != nil {
		return errorBody{}, false
	}
	return p, true
}

// apiError reads the error and the flat shapes, in that order.
func (p *errorBody) apiError() (APIError, bool) {
	switch {
	case Truthy(p.Error):
		if s, isStr := JSONString(p.Error); isStr {
			return APIError{Message: s}, true
		}
		var o ErrorObject
		if err := json.Unmarshal(p.Error, &o); err != nil {
			return APIError{Message: Clip(p.Error)}, true
		}
		return o.APIError(), true
	case p.Object == "error":
		return p.APIError(), true
	}
	return APIError{}, false
}

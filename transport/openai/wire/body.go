package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/agentrun/agentrun/textcut"
)

// Truthy reports whether a raw JSON value is present and not null, false, 0, "", {}
// or [] (the test openai-python applies to "error").
func Truthy(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", "false", "0", `""`, "{}", "[]":
		return false
	}
	return true
}

// JSONString decodes raw as a JSON string; ok is false when raw is not one.
func JSONString(raw json.RawMessage) (s string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// maxClip is how many bytes of a payload Clip keeps, with the mark of a cut.
const maxClip = 300

// Clip shortens raw bytes for an error message: trimmed, cut on a character boundary
// to at most 300 bytes including the "…" that marks the cut, and made valid UTF-8.
func Clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	return strings.ToValidUTF8(textcut.Clip(s, maxClip, textcut.Ellipsis), "\uFFFD")
}

// JSONProblem names what is wrong with a payload without repeating it, for err from
// json.Unmarshal. what names the expected object with its article ("a chunk"), for a
// payload that is not an object at all.
func JSONProblem(err error, what string) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "invalid JSON at offset " + strconv.FormatInt(se.Offset, 10)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return "not " + what + " object"
		}
		return "unexpected type of " + te.Field
	}
	return "invalid JSON"
}

// MaxHead is how much of a body a HeadReader keeps.
const MaxHead = 64 << 10

// HeadReader reads through to a response body and keeps its first MaxHead bytes until
// Stop, so that a decoder that met no event can tell whether the body was a bare JSON
// error instead of a stream.
type HeadReader struct {
	r       io.Reader
	buf     []byte
	stopped bool
}

// NewHeadReader returns a HeadReader reading r.
func NewHeadReader(r io.Reader) *HeadReader { return &HeadReader{r: r} }

// Read reads from the body, keeping what it reads until Stop.
func (h *HeadReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if !h.stopped {
		if room := MaxHead - len(h.buf); room > 0 {
			h.buf = append(h.buf, p[:min(n, room)]...)
		}
	}
	return n, err
}

// Stop drops the kept bytes and keeps no more: the decoder calls it at the first
// event, once the body is known to be a stream.
func (h *HeadReader) Stop() {
	h.stopped = true
	h.buf = nil
}

// Head returns the bytes kept so far, nil after Stop.
func (h *HeadReader) Head() []byte { return h.buf }

package transport

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// headLen is how many bytes of a body headReader keeps.
const headLen = 160

// headReader keeps the first headLen bytes read through it.
type headReader struct {
	r    io.Reader
	head []byte
}

func (h *headReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if room := headLen - len(h.head); room > 0 {
		h.head = append(h.head, p[:min(n, room)]...)
	}
	return n, err
}

// describeBody adds to the stream error of a body that yielded nothing what the server
// actually sent, when it was not an event stream (by its content type, or by its first
// line): the content type and the first bytes (the caller redacts the credentials), so
// that a 200 answer of HTML or garbage does not read as a stream cut short.
func describeBody(e *Error, resp *http.Response, head []byte) *Error {
	ct := resp.Header.Get("Content-Type")
	sse := strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "text/event-stream")
	if e.Kind != protocol.ErrStream || sse && looksLikeSSE(head) {
		return e
	}
	if ct == "" {
		ct = "none"
	}
	c := *e
	c.Message = fmt.Sprintf("%s (HTTP %d, Content-Type %s; the body starts %q)", e.Message, resp.StatusCode, ct, head)
	if !sse {
		c.Message = fmt.Sprintf("the server answered with Content-Type %s, not an event stream: %s", ct, c.Message)
	}
	return &c
}

// looksLikeSSE reports whether head begins as an event stream does: empty, or a field
// line (event:, data:, id:, retry:) or a comment.
func looksLikeSSE(head []byte) bool {
	s := strings.TrimLeft(string(head), " \t\r\n")
	if s == "" || s[0] == ':' {
		return true
	}
	for _, f := range []string{"event:", "data:", "id:", "retry:"} {
		if strings.HasPrefix(s, f) {
			return true
		}
	}
	return false
}

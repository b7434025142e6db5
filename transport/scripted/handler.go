package scripted

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// format is one wire format the handler serves.
type format uint8

const (
	formatAnthropic format = iota + 1 // Anthropic Messages
	formatChat                        // OpenAI Chat Completions
	formatResponses                   // OpenAI Responses
)

// routes maps request paths (without the optional /v1 prefix) to formats.
var routes = map[string]format{
	"/messages":         formatAnthropic,
	"/chat/completions": formatChat,
	"/responses":        formatResponses,
}

// maxBody bounds a request body.
const maxBody = 64 << 20

// Handler returns the HTTP form of m. It serves POST /v1/messages (Anthropic
// Messages), POST /v1/chat/completions (OpenAI Chat Completions) and POST
// /v1/responses (OpenAI Responses), each also without the /v1 prefix, as streams only
// ("stream": true), and GET /healthz. Every format carries the same responses as
// Stream, with the same delta boundaries. The script is the one of the session the
// X-Agentrun-Session header names (Options.Sessions), else the one of the model.
// Fault attempts are counted per session: the X-Agentrun-Session header when present,
// else a hash of the request body. A sub-agent's requests name their parent Task call
// in the protocol.ParentHeader. Handlers return as soon as the client goes away.
func (m *Model) Handler() http.Handler { return http.HandlerFunc(m.serveHTTP) }

func (m *Model) serveHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if path == "/v1" || strings.HasPrefix(path, "/v1/") {
		path = path[len("/v1"):]
	}
	if path == "/healthz" {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, formatAnthropic, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on /healthz", "")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
		return
	}
	f, ok := routes[path]
	if !ok {
		// The Anthropic error shape also has the "error" object OpenAI clients read.
		writeError(w, formatAnthropic, http.StatusNotFound, "no route for "+r.URL.Path, "")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, f, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path, "")
		return
	}
	tooLarge := "request body over " + strconv.Itoa(maxBody) + " bytes"
	if r.ContentLength > maxBody {
		writeError(w, f, http.StatusRequestEntityTooLarge, tooLarge, "")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, f, http.StatusRequestEntityTooLarge, tooLarge, "")
			return
		}
		writeError(w, f, http.StatusBadRequest, "read request body: "+err.Error(), "")
		return
	}
	wr, err := parseRequest(f, body)
	if err != nil {
		writeError(w, f, http.StatusBadRequest, err.Error(), "")
		return
	}
	if !wr.stream {
		writeError(w, f, http.StatusBadRequest, `the scripted model only streams: set "stream": true`, "")
		return
	}
	wr.req.Parent = r.Header.Get(protocol.ParentHeader)
	if m.limits != nil && !m.limits.admit(w, f, int64(m.measure(wr.req)/4), m.opts.Now()) {
		return
	}
	named := r.Header.Get(SessionHeader)
	session := named
	if session == "" {
		sum := sha256.Sum256(body)
		session = string(sum[:])
	}
	resp := m.respond(wr.req, named, func() string { return session })
	started := func() {}
	if f == formatAnthropic && (resp.fault == nil || resp.fault.Kind != FaultStatus) {
		started = m.cache.account(m, body, wr.req, resp, m.opts.Now())
	}
	ctx := r.Context()
	if protocol.Sleep(ctx, m.opts.FirstByte) != nil {
		return
	}
	rid := requestID(session, wr.req.Parent, resp.step)
	if resp.fault != nil {
		switch resp.fault.Kind {
		case FaultPanic:
			abort(w)
			return
		case FaultStatus:
			writeFault(w, f, resp.fault, rid)
			return
		case FaultCut, FaultStall, FaultMalformed, FaultEOF, FaultErrorEvent:
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set(requestIDHeader(f), rid)
	w.WriteHeader(http.StatusOK)
	started() // the answer has begun: what it wrote to the prompt cache is readable
	sw := &sseWriter{w: w, rc: http.NewResponseController(w),
		pause: func() error { return protocol.Sleep(ctx, m.opts.ChunkDelay) }, alive: ctx.Err}
	m.writeStream(sw, newRenderer(f, sw, resp, wr, rid, m.opts.Now()), resp)
	if sw.err != nil {
		return
	}
	if resp.fault == nil {
		return
	}
	switch resp.fault.Kind {
	case FaultCut:
		abort(w)
	case FaultStall:
		<-ctx.Done()
	case FaultStatus, FaultPanic, FaultMalformed, FaultEOF, FaultErrorEvent:
	}
}

// renderer writes one response in one wire format.
type renderer interface {
	begin()
	unit(u unit)
	// end completes the response with its usage, stop and terminal event.
	end()
	// errorEvent writes the format's mid-stream error event.
	errorEvent(typ string)
	// malformed writes a data line of broken JSON.
	malformed()
}

func newRenderer(f format, sw *sseWriter, r *response, wr wireRequest, id string, now time.Time) renderer {
	switch f {
	case formatAnthropic:
		return &anthropicStream{sw: sw, r: r, model: wr.req.Model, id: "msg_" + id}
	case formatChat:
		return &chatStream{sw: sw, r: r, model: wr.req.Model, id: "chatcmpl-" + id, created: now.Unix(), usage: wr.includeUsage}
	case formatResponses:
		return &responsesStream{sw: sw, r: r, model: wr.req.Model, id: "resp_" + id, created: now.Unix()}
	}
	panic("scripted: unknown format " + strconv.Itoa(int(f)))
}

// writeStream renders resp, stopping where its fault strikes.
func (m *Model) writeStream(sw *sseWriter, rd renderer, resp *response) {
	rd.begin()
	for _, u := range resp.sent(m.opts.ChunkRunes) {
		rd.unit(u)
	}
	if resp.fault == nil {
		rd.end()
		return
	}
	switch resp.fault.Kind {
	case FaultMalformed:
		rd.malformed()
	case FaultErrorEvent:
		rd.errorEvent(resp.fault.ErrorType)
	case FaultStatus, FaultPanic, FaultCut, FaultStall, FaultEOF:
	}
}

// writeFault answers with the HTTP error status of a status fault.
func writeFault(w http.ResponseWriter, f format, fault *Fault, rid string) {
	h, body := faultResponse(f, fault, rid)
	maps.Copy(w.Header(), h)
	w.WriteHeader(fault.Status)
	_, _ = w.Write(body)
}

// faultResponse is the headers and the body of the error response of a status fault in
// format f, with request id rid ("" for none).
func faultResponse(f format, fault *Fault, rid string) (http.Header, []byte) {
	h := http.Header{}
	if fault.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatFloat(fault.RetryAfter.Seconds(), 'f', -1, 64))
	}
	if fault.RetryAfterPrecise > 0 {
		h.Set("Retry-After-Ms", strconv.FormatFloat(float64(fault.RetryAfterPrecise)/float64(time.Millisecond), 'f', -1, 64))
	}
	for k, v := range fault.Header {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	if rid != "" {
		h.Set(requestIDHeader(f), rid)
	}
	if fault.Body != "" {
		return h, []byte(fault.Body)
	}
	return h, errorBody(f, fault.Status, statusText(fault.Status), rid)
}

// writeError answers with an error status and a body in format f's error shape.
func writeError(w http.ResponseWriter, f format, status int, msg, rid string) {
	w.Header().Set("Content-Type", "application/json")
	if rid != "" {
		w.Header().Set(requestIDHeader(f), rid)
	}
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(f, status, msg, rid))
}

func requestIDHeader(f format) string {
	if f == formatAnthropic {
		return "Request-Id"
	}
	return "X-Request-Id"
}

// requestID is a deterministic id of one response of the agent of parent.
func requestID(session, parent string, step int) string {
	key := session + "\x00" + strconv.Itoa(step)
	if parent != "" {
		key += "\x00" + parent
	}
	sum := sha256.Sum256([]byte(key))
	return "scripted_" + hex.EncodeToString(sum[:8])
}

// abort drops the connection without ending the response. What was written before
// is already flushed.
func abort(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	if conn, _, err := rc.Hijack(); err == nil {
		_ = conn.Close()
		return
	}
	panic(http.ErrAbortHandler) // HTTP/2 cannot be hijacked; this resets the stream
}

// sseWriter writes events of one stream, flushing each and waiting the chunk delay
// before every delta but the first. Its first error is sticky and stops all writes.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	// pause waits the chunk delay, or fails when the client is gone; alive reports
	// whether it still is.
	pause func() error
	alive func() error
	ticks int
	buf   []byte
	err   error
}

// send writes one event; name may be empty (Chat has no event lines). tick marks a
// delta.
func (s *sseWriter) send(name string, data []byte, tick bool) {
	if s.err != nil {
		return
	}
	if tick {
		if s.ticks > 0 {
			if s.err = s.pause(); s.err != nil {
				return
			}
		}
		s.ticks++
	}
	if s.err = s.alive(); s.err != nil {
		return
	}
	s.buf = s.buf[:0]
	if name != "" {
		s.buf = append(s.buf, "event: "...)
		s.buf = append(s.buf, name...)
		s.buf = append(s.buf, '\n')
	}
	s.buf = append(s.buf, "data: "...)
	s.buf = append(s.buf, data...)
	s.buf = append(s.buf, "\n\n"...)
	if _, s.err = s.w.Write(s.buf); s.err != nil {
		return
	}
	s.err = s.rc.Flush()
}

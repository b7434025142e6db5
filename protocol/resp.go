package protocol

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The RESP-like framing is the seed's: "*N\r\n" and then N fields, each "$LEN\r\n",
// LEN raw bytes and "\r\n". LEN counts bytes; nothing is escaped; fields may be empty.
// Field 0 is the type name (Kind.String). The fields after it follow the seed's order
// for each kind; fields agentrun adds (a sub-agent's parent id, a thinking signature,
// …) come last as name/value pairs, so a seed reader that only looks at the leading
// fields still understands the frame.

// Errors returned by Decoder.Err.
var (
	// ErrMalformed means the bytes are not a valid frame.
	ErrMalformed = errors.New("malformed frame")
	// ErrFrameTooLarge means a frame is larger than the decoder's limit.
	ErrFrameTooLarge = errors.New("frame too large")
	// ErrTruncated means the input ended inside a frame.
	ErrTruncated = errors.New("truncated frame")
)

// DefaultMaxFrame is the decoder's default limit on the size of one frame.
const DefaultMaxFrame = 64 << 20

// maxFields bounds the field count of one frame, whatever its declared size.
const maxFields = 1 << 16

// Names of the trailing extension pairs.
const (
	extParent     = "parent_tool_use_id"
	extSignature  = "signature"
	extRedacted   = "redacted"
	extUsageKind  = "kind"
	extSubSession = "sub_session_id"
	extCacheRead  = "cache_read"
	extCacheWrite = "cache_creation"
	extDesc       = "description"
	extPrompt     = "prompt"
	extTimestamp  = "timestamp"
)

// frame accumulates the fields of one message being encoded.
type frame struct {
	fields []string
}

func (f *frame) add(s ...string) { f.fields = append(f.fields, s...) }

func (f *frame) ext(name, value string) {
	if value != "" {
		f.fields = append(f.fields, name, value)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func boolField(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// fieldsOf returns the fields of m after the type name.
func fieldsOf(m Message) ([]string, error) {
	var f frame
	switch m.Kind {
	case KindText:
		f.add(m.Text)
	case KindThinking:
		f.add(m.Text)
		f.ext(extSignature, m.Signature)
		f.ext(extRedacted, m.Redacted)
	case KindToolCall:
		f.add(m.Call.Name, m.Call.ID, m.Call.Input)
		for _, kv := range InputMembers(m.Call.Input) {
			f.add(kv[0], kv[1])
		}
	case KindToolResult:
		f.add(m.Result.ToolUseID, m.Result.Name, m.Result.Content, boolField(m.Result.IsError))
	case KindUsage:
		u := m.Usage
		f.add(itoa(u.Input), itoa(u.Output), itoa(u.CacheRead), itoa(u.CacheCreation))
		f.ext(extUsageKind, m.UsageKind)
		f.ext(extSubSession, m.SubSession)
	case KindStop:
		f.add(m.Reason)
	case KindContextUpdate:
		f.add(m.Context.Kind, m.Context.Trigger)
	case KindSubAgentResult:
		s := subOrZero(m.Sub)
		f.add(s.SessionID, s.Status, itoa(s.Usage.Input), itoa(s.Usage.Output), s.Thinking, s.Text)
		if s.Usage.CacheRead != 0 {
			f.ext(extCacheRead, itoa(s.Usage.CacheRead))
		}
		if s.Usage.CacheCreation != 0 {
			f.ext(extCacheWrite, itoa(s.Usage.CacheCreation))
		}
		f.ext(extDesc, s.Description)
		f.ext(extPrompt, s.Prompt)
		f.ext(extTimestamp, s.Timestamp)
	case KindError:
		f.add(m.Err.Kind, m.Err.Message)
	case KindRetry:
		f.add(strconv.Itoa(m.Attempt), itoa(m.DelayMS), m.Reason)
	case KindSessionStart:
		b, err := json.Marshal(sessionOrZero(m.Session))
		if err != nil {
			return nil, err
		}
		f.add(string(b))
	case KindSubAgentStart:
		s := subOrZero(m.Sub)
		f.add(s.SessionID, s.Description, s.Prompt, s.Timestamp)
	case KindSubAgentEnd:
		s := subOrZero(m.Sub)
		f.add(s.SessionID, s.Status, s.Timestamp)
	case KindResult:
		b, err := json.Marshal(resultOrZero(m.Final))
		if err != nil {
			return nil, err
		}
		f.add(string(b))
	default:
		return nil, fmt.Errorf("encode: invalid kind %d", m.Kind)
	}
	f.ext(extParent, m.Parent)
	return f.fields, nil
}

func subOrZero(s *SubAgent) SubAgent {
	if s == nil {
		return SubAgent{}
	}
	return *s
}

func sessionOrZero(s *SessionStart) SessionStart {
	if s == nil {
		return SessionStart{}
	}
	return *s
}

func resultOrZero(r *Result) Result {
	if r == nil {
		return Result{}
	}
	return *r
}

// AppendRESP appends the frame of m to dst.
func AppendRESP(dst []byte, m Message) ([]byte, error) {
	// Fast paths for the hot kinds avoid building a field slice.
	switch {
	case m.Kind == KindText && m.Parent == "":
		dst = append(dst, "*2\r\n$4\r\nTEXT\r\n"...)
		return appendField(dst, m.Text), nil
	case m.Kind == KindThinking && m.Parent == "" && m.Signature == "" && m.Redacted == "":
		dst = append(dst, "*2\r\n$8\r\nTHINKING\r\n"...)
		return appendField(dst, m.Text), nil
	}
	fields, err := fieldsOf(m)
	if err != nil {
		return dst, err
	}
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(fields)+1), 10)
	dst = append(dst, '\r', '\n')
	dst = appendField(dst, m.Kind.String())
	for _, f := range fields {
		dst = appendField(dst, f)
	}
	return dst, nil
}

func appendField(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// RESPWriter writes messages as frames to an io.Writer, one Write call per frame.
// It is not safe for concurrent use.
type RESPWriter struct {
	w   io.Writer
	buf []byte
}

// NewRESPWriter returns a writer of frames to w.
func NewRESPWriter(w io.Writer) *RESPWriter { return &RESPWriter{w: w} }

// Write encodes m and writes its frame.
func (e *RESPWriter) Write(m Message) error {
	var err error
	e.buf, err = AppendRESP(e.buf[:0], m)
	if err != nil {
		return err
	}
	if _, err := e.w.Write(e.buf); err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	return nil
}

// RESPDecoder reads frames from a stream. It is Scanner-shaped: call Next until it
// returns false, then Err, which is nil at a clean end of input between frames.
type RESPDecoder struct {
	r        *bufio.Reader
	maxFrame int
	msg      Message
	err      error
	fields   []string
}

// NewRESPDecoder returns a decoder reading from r with the default frame limit.
func NewRESPDecoder(r io.Reader) *RESPDecoder {
	return &RESPDecoder{r: bufio.NewReaderSize(r, 64<<10), maxFrame: DefaultMaxFrame}
}

// SetMaxFrame sets the largest frame, in bytes, that Next accepts. Call it before Next.
func (d *RESPDecoder) SetMaxFrame(n int) { d.maxFrame = n }

// Message returns the message read by the last successful Next.
func (d *RESPDecoder) Message() Message { return d.msg }

// Err returns the first error met, or nil if the input ended cleanly between frames.
func (d *RESPDecoder) Err() error { return d.err }

// Next reads the next frame. It returns false at the end of input or on error.
func (d *RESPDecoder) Next() bool {
	if d.err != nil {
		return false
	}
	m, err := d.readFrame()
	if err != nil {
		if err != io.EOF {
			d.err = err
		}
		return false
	}
	d.msg = m
	return true
}

// readLine reads a header line ending in CRLF and returns the number after the prefix.
func (d *RESPDecoder) readNumber(prefix byte, start bool) (int, error) {
	line, err := d.r.ReadSlice('\n')
	if err != nil {
		switch {
		case err == io.EOF && start && len(line) == 0:
			return 0, io.EOF
		case err == io.EOF:
			return 0, fmt.Errorf("%w: input ends inside a header", ErrTruncated)
		case errors.Is(err, bufio.ErrBufferFull):
			return 0, fmt.Errorf("%w: header line too long", ErrMalformed)
		}
		return 0, err
	}
	if len(line) < 4 || line[0] != prefix || line[len(line)-2] != '\r' {
		return 0, fmt.Errorf("%w: bad header %q", ErrMalformed, clip(line))
	}
	digits := line[1 : len(line)-2]
	if len(digits) > 10 {
		return 0, fmt.Errorf("%w: bad length %q", ErrMalformed, clip(line))
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: bad length %q", ErrMalformed, clip(line))
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

func clip(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}

func (d *RESPDecoder) readFrame() (Message, error) {
	n, err := d.readNumber('*', true)
	if err != nil {
		return Message{}, err
	}
	if n < 1 || n > maxFields {
		return Message{}, fmt.Errorf("%w: field count %d", ErrMalformed, n)
	}
	total := 0
	d.fields = d.fields[:0]
	for i := 0; i < n; i++ {
		size, err := d.readNumber('$', false)
		if err != nil {
			return Message{}, err
		}
		total += size
		if total > d.maxFrame {
			return Message{}, fmt.Errorf("%w: more than %d bytes", ErrFrameTooLarge, d.maxFrame)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(d.r, buf); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return Message{}, fmt.Errorf("%w: input ends inside field %d", ErrTruncated, i)
			}
			return Message{}, err
		}
		if buf[size] != '\r' || buf[size+1] != '\n' {
			return Message{}, fmt.Errorf("%w: field %d not followed by CRLF", ErrMalformed, i)
		}
		d.fields = append(d.fields, string(buf[:size]))
	}
	return messageOf(d.fields)
}

// messageOf builds a message from the fields of a frame, type name first.
func messageOf(fields []string) (Message, error) {
	k, ok := KindOf(fields[0])
	if !ok {
		return Message{}, fmt.Errorf("%w: unknown type %q", ErrMalformed, clip([]byte(fields[0])))
	}
	p := fieldParser{kind: k, rest: fields[1:]}
	m := Message{Kind: k}
	switch k {
	case KindText:
		m.Text = p.next()
	case KindThinking:
		m.Text = p.next()
	case KindToolCall:
		m.Call = ToolCall{Name: p.next(), ID: p.next(), Input: p.next()}
		p.skip(2 * len(InputMembers(m.Call.Input)))
	case KindToolResult:
		m.Result = ToolResult{ToolUseID: p.next(), Name: p.next(), Content: p.next(), IsError: p.flag()}
	case KindUsage:
		m.Usage = Usage{Input: p.int(), Output: p.int(), CacheRead: p.int(), CacheCreation: p.int()}
	case KindStop:
		m.Reason = p.next()
	case KindContextUpdate:
		m.Context = ContextUpdate{Kind: p.next(), Trigger: p.next()}
	case KindSubAgentResult:
		s := SubAgent{SessionID: p.next(), Status: p.next()}
		s.Usage.Input, s.Usage.Output = p.int(), p.int()
		s.Thinking, s.Text = p.next(), p.next()
		m.Sub = &s
	case KindError:
		m.Err = Error{Kind: p.next(), Message: p.next()}
	case KindRetry:
		m.Attempt = int(p.int())
		m.DelayMS = p.int()
		m.Reason = p.next()
	case KindSessionStart:
		var s SessionStart
		p.json(&s)
		m.Session = &s
	case KindSubAgentStart:
		m.Sub = &SubAgent{SessionID: p.next(), Description: p.next(), Prompt: p.next(), Timestamp: p.next()}
	case KindSubAgentEnd:
		m.Sub = &SubAgent{SessionID: p.next(), Status: p.next(), Timestamp: p.next()}
	case KindResult:
		var r Result
		p.json(&r)
		m.Final = &r
	}
	if p.err != nil {
		return Message{}, p.err
	}
	if len(p.rest)%2 != 0 {
		return Message{}, fmt.Errorf("%w: %s has an odd number of trailing fields", ErrMalformed, k)
	}
	for i := 0; i < len(p.rest); i += 2 {
		if err := m.setExt(p.rest[i], p.rest[i+1]); err != nil {
			return Message{}, err
		}
	}
	return m, nil
}

func (m *Message) setExt(name, value string) error {
	switch name {
	case extParent:
		m.Parent = value
		return nil
	}
	switch m.Kind {
	case KindThinking:
		switch name {
		case extSignature:
			m.Signature = value
		case extRedacted:
			m.Redacted = value
		}
	case KindUsage:
		switch name {
		case extUsageKind:
			m.UsageKind = value
		case extSubSession:
			m.SubSession = value
		}
	case KindSubAgentResult:
		switch name {
		case extCacheRead, extCacheWrite:
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return fmt.Errorf("%w: %s is not a number", ErrMalformed, name)
			}
			if name == extCacheRead {
				m.Sub.Usage.CacheRead = n
			} else {
				m.Sub.Usage.CacheCreation = n
			}
		case extDesc:
			m.Sub.Description = value
		case extPrompt:
			m.Sub.Prompt = value
		case extTimestamp:
			m.Sub.Timestamp = value
		}
	}
	// Unknown names are ignored so that newer writers stay readable.
	return nil
}

// fieldParser consumes positional fields, remembering the first error.
type fieldParser struct {
	kind Kind
	rest []string
	err  error
}

func (p *fieldParser) next() string {
	if len(p.rest) == 0 {
		if p.err == nil {
			p.err = fmt.Errorf("%w: %s has too few fields", ErrMalformed, p.kind)
		}
		return ""
	}
	s := p.rest[0]
	p.rest = p.rest[1:]
	return s
}

func (p *fieldParser) skip(n int) {
	if n > len(p.rest) {
		if p.err == nil {
			p.err = fmt.Errorf("%w: %s has too few fields", ErrMalformed, p.kind)
		}
		p.rest = nil
		return
	}
	p.rest = p.rest[n:]
}

func (p *fieldParser) int() int64 {
	s := p.next()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("%w: %s field %q is not a number", ErrMalformed, p.kind, clip([]byte(s)))
	}
	return n
}

func (p *fieldParser) flag() bool {
	switch s := p.next(); s {
	case "1":
		return true
	case "0", "":
		return false
	default:
		if p.err == nil {
			p.err = fmt.Errorf("%w: %s flag %q is not 0 or 1", ErrMalformed, p.kind, clip([]byte(s)))
		}
		return false
	}
}

func (p *fieldParser) json(v any) {
	s := p.next()
	if p.err != nil {
		return
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		p.err = fmt.Errorf("%w: %s payload: %v", ErrMalformed, p.kind, err)
	}
}

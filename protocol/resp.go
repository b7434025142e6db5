package protocol

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unsafe"
)

// The RESP-like framing is the seed's: "*N\r\n" and then N fields, each "$LEN\r\n",
// LEN raw bytes and "\r\n". LEN counts bytes; nothing is escaped; fields may be empty.
// Field 0 is the type name (Kind.String); respfields.go lays out the rest.

// Errors returned by RESPDecoder.Err.
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

const (
	// maxFields bounds the field count of one frame, whatever its declared size.
	maxFields = 1 << 16
	// maxTypeName is longer than every type name; a longer field 0 is not a known type.
	maxTypeName = 32
	// readBufferSize is the decoder's buffer. Fields that fit are copied once, from
	// the buffer into their string.
	readBufferSize = 64 << 10
	// frameBufferSize is FrameDecoder's: a worker's client holds one for the worker's
	// life, and 64 KiB for each of a thousand sessions was 64 MB of the runner's memory.
	frameBufferSize = 4 << 10
	// firstGrow caps the memory reserved for a large field before its bytes arrive,
	// so a short input that declares a huge field cannot make the decoder allocate it.
	firstGrow = 1 << 20
)

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
// Errors are sticky and wrap ErrMalformed, ErrFrameTooLarge or ErrTruncated, or are
// the underlying reader's error. It is not safe for concurrent use.
type RESPDecoder struct {
	r        *bufio.Reader
	maxFrame int
	msg      Message
	err      error
	fields   []string
}

// NewRESPDecoder returns a decoder reading from r with the default frame limit.
func NewRESPDecoder(r io.Reader) *RESPDecoder {
	return &RESPDecoder{r: bufio.NewReaderSize(r, readBufferSize), maxFrame: DefaultMaxFrame}
}

// SetMaxFrame sets the largest frame, counted as the sum of its field lengths, that
// Next accepts. Call it before Next.
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
		if !errors.Is(err, io.EOF) {
			d.err = err
		}
		return false
	}
	d.msg = m
	return true
}

// readNumber reads a header line ending in CRLF and returns the number after prefix.
// start says the line opens a frame, where a clean EOF is the end of the input.
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
		return 0, fmt.Errorf("read frame: %w", err)
	}
	if len(line) < 4 || line[0] != prefix || line[len(line)-2] != '\r' {
		return 0, fmt.Errorf("%w: bad header %.32q", ErrMalformed, line)
	}
	digits := line[1 : len(line)-2]
	if len(digits) > 10 {
		return 0, fmt.Errorf("%w: bad length %.32q", ErrMalformed, line)
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: bad length %.32q", ErrMalformed, line)
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

func (d *RESPDecoder) readFrame() (Message, error) {
	n, err := d.readNumber('*', true)
	if err != nil {
		return Message{}, err
	}
	if n < 1 || n > maxFields {
		return Message{}, fmt.Errorf("%w: field count %d", ErrMalformed, n)
	}
	k, total, err := d.readType()
	if err != nil {
		return Message{}, err
	}
	d.fields = d.fields[:0]
	for i := 1; i < n; i++ {
		size, err := d.readNumber('$', false)
		if err != nil {
			return Message{}, err
		}
		total += size
		if total > d.maxFrame {
			return Message{}, fmt.Errorf("%w: more than %d bytes", ErrFrameTooLarge, d.maxFrame)
		}
		s, err := d.readField(size, i)
		if err != nil {
			return Message{}, err
		}
		d.fields = append(d.fields, s)
	}
	m, err := messageOf(k, d.fields)
	clear(d.fields) // drop the decoder's references to strings the message now owns
	return m, err
}

// readType reads field 0 and returns its kind and length, without allocating.
func (d *RESPDecoder) readType() (Kind, int, error) {
	size, err := d.readNumber('$', false)
	if err != nil {
		return 0, 0, err
	}
	if size > d.maxFrame {
		return 0, 0, fmt.Errorf("%w: more than %d bytes", ErrFrameTooLarge, d.maxFrame)
	}
	if size > maxTypeName {
		return 0, 0, fmt.Errorf("%w: unknown type of %d bytes", ErrMalformed, size)
	}
	b, err := d.peekField(size, 0)
	if err != nil {
		return 0, 0, err
	}
	k, ok := kindOfBytes(b[:size])
	if !ok {
		return 0, 0, fmt.Errorf("%w: unknown type %q", ErrMalformed, b[:size])
	}
	_, _ = d.r.Discard(size + 2) // cannot fail: peekField buffered these bytes
	return k, size, nil
}

// peekField returns the buffered bytes of a field of size bytes and its CRLF.
func (d *RESPDecoder) peekField(size, i int) ([]byte, error) {
	b, err := d.r.Peek(size + 2)
	if err != nil {
		return nil, d.fieldError(err, i)
	}
	if b[size] != '\r' || b[size+1] != '\n' {
		return nil, fmt.Errorf("%w: field %d not followed by CRLF", ErrMalformed, i)
	}
	return b, nil
}

func (d *RESPDecoder) fieldError(err error, i int) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: input ends inside field %d", ErrTruncated, i)
	}
	return fmt.Errorf("read frame: %w", err)
}

// readField reads the payload of field i and its CRLF. A field that fits the buffer is
// copied once, from the buffer into the string; a larger one is read into memory of its
// own, which grows only as bytes arrive, past the buffer once it is empty (so a small
// buffer costs no extra reads).
func (d *RESPDecoder) readField(size, i int) (string, error) {
	if size+2 <= d.r.Size() {
		b, err := d.peekField(size, i)
		if err != nil {
			return "", err
		}
		s := string(b[:size])
		_, _ = d.r.Discard(size + 2) // cannot fail: peekField buffered these bytes
		return s, nil
	}
	buf := make([]byte, 0, min(size, firstGrow))
	for len(buf) < size {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, size-len(buf)) // the bytes are arriving: reserve the rest at once
		}
		n, err := d.r.Read(buf[len(buf):min(size, cap(buf))])
		buf = buf[:len(buf)+n]
		if err != nil && len(buf) < size {
			return "", d.fieldError(err, i)
		}
	}
	if _, err := d.peekField(0, i); err != nil {
		return "", err
	}
	_, _ = d.r.Discard(2)
	// buf is never written again: the string may take its memory, as strings.Builder's does.
	return unsafe.String(unsafe.SliceData(buf), size), nil
}

// kindOfBytes returns the kind whose RESP type name is b.
func kindOfBytes(b []byte) (Kind, bool) {
	for k := KindText; k < kindEnd; k++ {
		if kindNames[k] == string(b) {
			return k, true
		}
	}
	return 0, false
}

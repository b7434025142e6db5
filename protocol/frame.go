package protocol

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// AppendFrame appends one frame of the seed's framing whose fields are fields, as they
// are: the same bytes as AppendRESP, for vocabularies other than Message (the worker
// boundary's requests and replies).
func AppendFrame(dst []byte, fields ...string) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(fields)), 10)
	dst = append(dst, '\r', '\n')
	for _, f := range fields {
		dst = appendField(dst, f)
	}
	return dst
}

// FrameDecoder reads frames of any field 0 from a stream, with RESPDecoder's limits and
// errors. It is Scanner-shaped: call Next until it returns false, then Err. It is not
// safe for concurrent use.
type FrameDecoder struct {
	d      RESPDecoder
	fields []string
}

// NewFrameDecoder returns a decoder reading from r, accepting frames of up to maxFrame
// bytes (the sum of their field lengths).
func NewFrameDecoder(r io.Reader, maxFrame int) *FrameDecoder {
	return &FrameDecoder{d: RESPDecoder{r: bufio.NewReaderSize(r, frameBufferSize), maxFrame: maxFrame}}
}

// Fields returns the fields of the frame read by the last successful Next. The slice
// is reused by the next call.
func (f *FrameDecoder) Fields() []string { return f.fields }

// Err returns the first error met, or nil if the input ended cleanly between frames.
func (f *FrameDecoder) Err() error { return f.d.err }

// Buffered reports whether bytes of a next frame are already buffered.
func (f *FrameDecoder) Buffered() bool { return f.d.r.Buffered() > 0 }

// Next reads the next frame. It returns false at the end of input or on error.
func (f *FrameDecoder) Next() bool {
	if f.d.err != nil {
		return false
	}
	if err := f.read(); err != nil {
		if !errors.Is(err, io.EOF) {
			f.d.err = err
		}
		return false
	}
	return true
}

func (f *FrameDecoder) read() error {
	n, err := f.d.readNumber('*', true)
	if err != nil {
		return err
	}
	if n < 1 || n > maxFields {
		return fmt.Errorf("%w: field count %d", ErrMalformed, n)
	}
	f.fields = f.fields[:0]
	total := 0
	for i := range n {
		size, err := f.d.readNumber('$', false)
		if err != nil {
			return err
		}
		total += size
		if total > f.d.maxFrame {
			return fmt.Errorf("%w: more than %d bytes", ErrFrameTooLarge, f.d.maxFrame)
		}
		s, err := f.d.readField(size, i)
		if err != nil {
			return err
		}
		f.fields = append(f.fields, s)
	}
	return nil
}

// Package sse decodes text/event-stream bodies into events, one synchronous
// Scanner-shaped step at a time.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrLineTooLong means a line is longer than the decoder's limit.
var ErrLineTooLong = errors.New("sse: line too long")

// DefaultMaxLine is the default limit on one line: a redacted thinking block or a large
// tool input can make single lines of several megabytes.
const DefaultMaxLine = 32 << 20

// Event is one dispatched event, or one comment line.
type Event struct {
	// Type is the event field; empty when the stream gave none.
	Type string
	// Data is the data lines joined by "\n". It is a fresh copy owned by the caller.
	Data []byte
	// ID is the last id field seen in this event.
	ID string
	// Comment is true for a ":" line, surfaced on its own as a keep-alive signal;
	// Data then holds the comment text after the colon.
	Comment bool
}

// Decoder reads events from a text/event-stream body. Lines may end in LF, CRLF or a
// lone CR, split anywhere across reads; a leading UTF-8 BOM is dropped; a pending event
// is dispatched at EOF even without its blank line. It is not safe for concurrent use.
type Decoder struct {
	r       io.Reader
	buf     []byte // unread bytes are buf[start:end]
	start   int
	end     int
	maxLine int
	eof     bool
	skipLF  bool // the previous line ended in CR: a following LF belongs to it
	begun   bool // the BOM check is done

	typ      []byte
	data     []byte
	hasData  bool
	id       string
	lastType string

	ev  Event
	err error
}

// NewDecoder returns a decoder that reads from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: r, buf: make([]byte, 4096), maxLine: DefaultMaxLine}
}

// SetMaxLine sets the longest line accepted. Call it before the first Next.
func (d *Decoder) SetMaxLine(n int) { d.maxLine = n }

// Event returns the event read by the last successful Next.
func (d *Decoder) Event() Event { return d.ev }

// Err returns the first error met; nil after a clean EOF.
func (d *Decoder) Err() error { return d.err }

// Next advances to the next event or comment. It returns false at EOF or on error.
func (d *Decoder) Next() bool {
	for d.err == nil {
		line, ok := d.readLine()
		if !ok {
			if d.err == nil && d.hasData {
				d.dispatch()
				return true
			}
			return false
		}
		if len(line) == 0 {
			if d.hasData {
				d.dispatch()
				return true
			}
			d.typ = d.typ[:0]
			continue
		}
		if line[0] == ':' {
			d.ev = Event{Comment: true, Data: bytes.Clone(trimSpace1(line[1:]))}
			return true
		}
		d.field(line)
	}
	return false
}

func trimSpace1(b []byte) []byte {
	if len(b) > 0 && b[0] == ' ' {
		return b[1:]
	}
	return b
}

// field applies one "name: value" line to the pending event.
func (d *Decoder) field(line []byte) {
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], trimSpace1(line[i+1:])
	}
	switch string(name) {
	case "data":
		if d.hasData {
			d.data = append(d.data, '\n')
		}
		d.data = append(d.data, value...)
		d.hasData = true
	case "event":
		d.typ = append(d.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			d.id = string(value)
		}
	}
	// "retry" and unknown fields are ignored.
}

func (d *Decoder) dispatch() {
	typ := d.lastType
	if string(d.typ) != typ {
		typ = string(d.typ)
		d.lastType = typ
	}
	d.ev = Event{Type: typ, Data: bytes.Clone(d.data), ID: d.id}
	if d.ev.Data == nil {
		d.ev.Data = []byte{}
	}
	d.data = d.data[:0]
	d.typ = d.typ[:0]
	d.hasData = false
}

// readLine returns the next line without its terminator. The slice is valid until the
// next call. ok is false at EOF (with no partial line left) or on error.
func (d *Decoder) readLine() (line []byte, ok bool) {
	scanned := 0
	for {
		if d.skipLF && d.start < d.end {
			if d.buf[d.start] == '\n' {
				d.start++
			}
			d.skipLF = false
		}
		if !d.begun && d.end-d.start >= 3 {
			if bytes.HasPrefix(d.buf[d.start:d.end], []byte("\xef\xbb\xbf")) {
				d.start += 3
				scanned = 0
			}
			d.begun = true
		}
		seg := d.buf[d.start+scanned : d.end]
		if i := lineEnd(seg); i >= 0 {
			i += scanned
			line = d.buf[d.start : d.start+i]
			if d.buf[d.start+i] == '\r' {
				d.skipLF = true
			}
			d.start += i + 1
			d.begun = true
			return line, true
		}
		scanned = d.end - d.start
		if scanned > d.maxLine {
			d.err = fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, d.maxLine)
			return nil, false
		}
		if d.eof {
			if !d.begun {
				d.begun = true
				if bytes.HasPrefix(d.buf[d.start:d.end], []byte("\xef\xbb\xbf")) {
					d.start += 3
					scanned = 0
					continue
				}
			}
			if d.start < d.end {
				line = d.buf[d.start:d.end]
				d.start = d.end
				return line, true
			}
			return nil, false
		}
		d.fill()
		if d.err != nil {
			return nil, false
		}
	}
}

// lineEnd returns the index of the first CR or LF in b, or -1.
func lineEnd(b []byte) int {
	n := bytes.IndexByte(b, '\n')
	if n < 0 {
		n = len(b)
	}
	if r := bytes.IndexByte(b[:n], '\r'); r >= 0 {
		return r
	}
	if n == len(b) {
		return -1
	}
	return n
}

// fill reads more input, compacting or growing the buffer as needed.
func (d *Decoder) fill() {
	if d.start > 0 {
		copy(d.buf, d.buf[d.start:d.end])
		d.end -= d.start
		d.start = 0
	}
	if d.end == len(d.buf) {
		nb := make([]byte, 2*len(d.buf))
		copy(nb, d.buf[:d.end])
		d.buf = nb
	}
	for empty := 0; empty < 100; empty++ {
		n, err := d.r.Read(d.buf[d.end:])
		d.end += n
		if err == io.EOF {
			d.eof = true
			return
		}
		if err != nil {
			d.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	d.err = io.ErrNoProgress
}

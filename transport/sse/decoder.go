// Package sse decodes text/event-stream bodies into events, one synchronous
// Scanner-shaped step at a time.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// The decoder's errors. Read errors of the underlying reader are returned as they are.
var (
	// ErrLineTooLong means a line is longer than the decoder's limit.
	ErrLineTooLong = errors.New("sse: line too long")
	// ErrEventTooLong means the data lines of one event add up to more than the limit.
	ErrEventTooLong = errors.New("sse: event too long")
)

// DefaultMaxLine is the default limit on one line and on the data of one event: a
// redacted thinking block or a large tool input can make single lines of several
// megabytes.
const DefaultMaxLine = 32 << 20

// bom is the UTF-8 byte order mark, dropped at the start of a stream.
var bom = []byte("\xef\xbb\xbf")

// Event is one dispatched event, or one comment line.
type Event struct {
	// Type is the event field; empty when the event gave none.
	Type string
	// Data is the event's data lines joined by "\n", without a trailing newline. From
	// Decoder.Event it is a fresh, non-nil copy owned by the caller; from Decoder.Borrow
	// it is the decoder's own buffer.
	Data []byte
	// ID is the last event ID of the stream so far: the value of the latest id field
	// without a NUL byte, in this event or an earlier one.
	ID string
	// Retry is the reconnection delay most recently set by a retry field made only of
	// ASCII digits (milliseconds); 0 when none has been seen.
	Retry time.Duration
	// Comment is true for a ":" line, surfaced on its own as a keep-alive signal;
	// Data then holds the comment text after the colon and one optional space.
	Comment bool
}

// Decoder reads events from a text/event-stream body following the WHATWG rules:
// lines may end in LF, CRLF or a lone CR, split anywhere across reads (UTF-8 is never
// decoded before a line is complete); a leading UTF-8 BOM is dropped; data lines are
// joined by "\n"; a blank line dispatches the pending event if it has a data field; a
// pending event is also dispatched at EOF without its blank line. It is not safe for
// concurrent use.
type Decoder struct {
	r       io.Reader
	buf     []byte // unread bytes are buf[start:end]
	start   int
	end     int
	lfHit   int // index in buf of the next LF found, stale once below the scan position
	lfMiss  int // an LF search that found none covered buf up to here: no need to rescan it
	maxLine int
	eof     bool
	skipLF  bool // the previous line ended in CR: a following LF belongs to it
	begun   bool // the BOM check is done

	typ        []byte
	data       []byte
	hasData    bool
	dispatched bool // ev.Data is data: clear it before the next event
	id         string
	retry      time.Duration
	lastType   string // reused for Type while the event field stays the same

	ev  Event
	err error
}

// NewDecoder returns a decoder that reads from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: r, buf: make([]byte, 4096), maxLine: DefaultMaxLine, lfHit: -1}
}

// SetMaxLine sets the longest line, and the longest data of one event, accepted
// [DefaultMaxLine]. Call it before the first Next.
func (d *Decoder) SetMaxLine(n int) { d.maxLine = n }

// Event returns the event read by the last successful Next; its Data is a fresh copy.
func (d *Decoder) Event() Event {
	e := d.ev
	e.Data = make([]byte, len(d.ev.Data))
	copy(e.Data, d.ev.Data)
	return e
}

// Borrow returns the event read by the last successful Next like Event, but without
// copying: its Data aliases the decoder's buffer and is valid only until the next call
// to Next.
func (d *Decoder) Borrow() Event { return d.ev }

// Err returns the first error met: ErrLineTooLong, ErrEventTooLong or the reader's
// error. It is nil after a clean EOF.
func (d *Decoder) Err() error { return d.err }

// Next advances to the next event or comment. It returns false at EOF or on error.
func (d *Decoder) Next() bool {
	if d.dispatched {
		d.data = d.data[:0]
		d.dispatched = false
	}
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
			d.ev = Event{Comment: true, Data: trimSpace1(line[1:]), ID: d.id, Retry: d.retry}
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

// field applies one "name: value" line to the pending event. A line without a colon
// is a field name with an empty value; unknown fields are ignored.
func (d *Decoder) field(line []byte) {
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], trimSpace1(line[i+1:])
	}
	switch string(name) {
	case "data":
		size := len(d.data) + len(value)
		if d.hasData {
			size++
		}
		if size > d.maxLine {
			d.err = fmt.Errorf("%w: more than %d bytes of data", ErrEventTooLong, d.maxLine)
			return
		}
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
	case "retry":
		if ms, ok := digits(value); ok {
			d.retry = time.Duration(ms) * time.Millisecond
		}
	}
}

// digits parses a retry value: ASCII digits only, small enough to be a duration.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	ms, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || ms > int64(1<<63-1)/int64(time.Millisecond) {
		return 0, false
	}
	return ms, true
}

func (d *Decoder) dispatch() {
	if string(d.typ) != d.lastType {
		d.lastType = string(d.typ)
	}
	d.ev = Event{Type: d.lastType, Data: d.data, ID: d.id, Retry: d.retry}
	d.dispatched = true // d.data is lent out until the next Next
	d.typ = d.typ[:0]
	d.hasData = false
}

// readLine returns the next line without its terminator. The slice is valid until the
// next call. ok is false at EOF (with no partial line left) or on error.
func (d *Decoder) readLine() (line []byte, ok bool) {
	scanned := 0 // buf[start:start+scanned] is known to hold no line end
	for {
		if d.skipLF && d.start < d.end {
			if d.buf[d.start] == '\n' {
				d.start++
			}
			d.skipLF = false
		}
		if !d.begun {
			b := d.buf[d.start:d.end]
			switch {
			case bytes.HasPrefix(b, bom):
				d.start += len(bom)
				d.begun = true
			case len(b) >= len(bom) || !bytes.HasPrefix(bom, b) || d.eof:
				d.begun = true
			default: // a proper prefix of the BOM (or nothing yet): read on
				if d.fill(); d.err != nil {
					return nil, false
				}
				continue
			}
		}
		if i := d.lineEnd(d.start + scanned); i >= 0 {
			n := i - d.start
			if n > d.maxLine {
				d.err = fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, d.maxLine)
				return nil, false
			}
			line = d.buf[d.start:i]
			d.skipLF = d.buf[i] == '\r'
			d.start = i + 1
			return line, true
		}
		scanned = d.end - d.start
		if scanned > d.maxLine {
			d.err = fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, d.maxLine)
			return nil, false
		}
		if d.eof {
			if scanned == 0 {
				return nil, false
			}
			line = d.buf[d.start:d.end]
			d.start = d.end
			return line, true
		}
		if d.fill(); d.err != nil {
			return nil, false
		}
	}
}

// lineEnd returns the absolute index of the first CR or LF in buf[from:end], or -1.
// The position of the next LF is remembered, so a run of CR-terminated lines does not
// rescan the rest of a large buffer for an LF once per line.
func (d *Decoder) lineEnd(from int) int {
	lf := d.lfHit
	if lf < from {
		scan := max(from, d.lfMiss)
		if i := bytes.IndexByte(d.buf[scan:d.end], '\n'); i >= 0 {
			lf = scan + i
		} else {
			lf = -1
			d.lfMiss = d.end
		}
		d.lfHit = lf
	}
	limit := d.end
	if lf >= 0 {
		limit = lf
	}
	if cr := bytes.IndexByte(d.buf[from:limit], '\r'); cr >= 0 {
		return from + cr
	}
	return lf
}

// fill reads more input, compacting or growing the buffer as needed.
func (d *Decoder) fill() {
	if d.start > 0 {
		copy(d.buf, d.buf[d.start:d.end])
		d.end -= d.start
		d.lfHit -= d.start
		d.lfMiss = max(d.lfMiss-d.start, 0)
		d.start = 0
	}
	if d.end == len(d.buf) {
		// Growth stops just past the line limit: a longer line fails before the next
		// fill, so a hostile line never costs more than the limit.
		nb := make([]byte, max(min(2*len(d.buf), d.maxLine+2), len(d.buf)+1))
		copy(nb, d.buf[:d.end])
		d.buf = nb
	}
	for range 100 {
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

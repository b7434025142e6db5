package protocol

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEventLine is EventReader's default limit on one line: a tool result or a
// redacted thinking block can make lines of many megabytes.
const DefaultMaxEventLine = 64 << 20

// ErrLineTooLong means an event line is longer than the reader's limit.
var ErrLineTooLong = errors.New("event line too long")

// LineError is a line of an events file that EventReader could not read.
type LineError struct {
	// Line is the 1-based number of the line.
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("events line %d: %v", e.Line, e.Err) }

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// EventReader reads the events of a stream.jsonl or events.jsonl file, one JSON line
// each. It is Scanner-shaped: call Next until it returns false, then Err.
//
// Lines may be up to DefaultMaxEventLine bytes long. Blank lines and events of unknown
// types (ErrNotEvent) are skipped. A writer that crashed leaves at most one torn last
// line, so a last line without its trailing newline, and a last line that does not
// parse, are skipped silently; a line that does not parse with more lines after it is
// a *LineError naming it. EventReader is not safe for concurrent use.
type EventReader struct {
	r       *bufio.Reader
	maxLine int
	line    int    // number of the last line read
	long    []byte // a line longer than the reader's buffer, gathered
	msg     Message
	env     Envelope
	err     error
	pending *LineError // a bad line, reported only if a line follows it
}

// NewEventReader returns a reader of the events in r.
func NewEventReader(r io.Reader) *EventReader {
	return &EventReader{r: bufio.NewReaderSize(r, 64<<10), maxLine: DefaultMaxEventLine}
}

// SetMaxLine sets the longest line accepted, in bytes without its newline. Call it
// before Next.
func (e *EventReader) SetMaxLine(n int) { e.maxLine = n }

// Message returns the message of the event read by the last successful Next.
func (e *EventReader) Message() Message { return e.msg }

// Envelope returns the envelope (seq, ts, session and job ids) of that event.
func (e *EventReader) Envelope() Envelope { return e.env }

// Err returns the first error met, or nil if the input ended cleanly.
func (e *EventReader) Err() error { return e.err }

// Next reads the next event. It returns false at the end of the input or on error.
func (e *EventReader) Next() bool {
	for e.err == nil {
		line, complete, err := e.readLine()
		if err != nil {
			e.err = err
			return false
		}
		blank := len(bytes.TrimSpace(line)) == 0
		if !complete {
			// The end of the input. A non-blank torn fragment is skipped, but it
			// still shows that a pending bad line was not the last one.
			if e.pending != nil && !blank {
				e.err = e.pending
			}
			return false
		}
		if blank {
			continue
		}
		if e.pending != nil {
			e.err = e.pending
			return false
		}
		m, env, err := ParseEvent(line)
		switch {
		case err == nil:
			e.msg, e.env = m, env
			return true
		case errors.Is(err, ErrNotEvent):
			continue
		default:
			e.pending = &LineError{Line: e.line, Err: err}
		}
	}
	return false
}

// readLine returns the next line without its newline; complete is false when the input
// ended before a newline, and line then holds the torn fragment, if any. The line is
// valid until the next call.
func (e *EventReader) readLine() (line []byte, complete bool, err error) {
	e.long = e.long[:0]
	tooLong := false
	for {
		chunk, err := e.r.ReadSlice('\n')
		switch {
		case err == nil:
			e.line++
			chunk = chunk[:len(chunk)-1]
			if tooLong || len(e.long)+len(chunk) > e.maxLine {
				return nil, false, &LineError{Line: e.line, Err: ErrLineTooLong}
			}
			if len(e.long) == 0 {
				return chunk, true, nil // straight from the buffer: no copy
			}
			e.long = append(e.long, chunk...)
			return e.long, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			// Keep gathering; past the limit, only look for the end of the line,
			// since a too-long torn last line is skipped like any torn line.
			if !tooLong && len(e.long)+len(chunk) > e.maxLine {
				tooLong = true
				e.long = e.long[:0]
			}
			if !tooLong {
				e.long = append(e.long, chunk...)
			}
		case err == io.EOF:
			if tooLong {
				// The skipped fragment was not blank; a placeholder says so.
				return []byte("torn"), false, nil
			}
			return append(e.long, chunk...), false, nil
		default:
			return nil, false, fmt.Errorf("read events: %w", err)
		}
	}
}

package transport

import (
	"errors"
	"io"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/sse"
)

// EventDecoder is the half of a streaming Decoder that every SSE wire format shares,
// shaped like bufio.Scanner with a split function: it reads the body's SSE events,
// passes each one (comments aside) to the format's event switch, and hands out the
// messages the switch pushed one at a time, reading the next event only when none is
// left. It owns the limits, the SSE line bound that follows from them, and the
// error state: a line or event past the bound ends the stream with an *Error of Kind
// protocol.ErrTooLarge, and a read error of the body is returned as it is.
//
// A format's Decoder embeds an EventDecoder, made by InitEventDecoder, so that Next,
// Message, Err and SetLimits are its own; its switch writes to the Out that
// InitEventDecoder returns, which it keeps to itself. It is not safe for concurrent use.
type EventDecoder struct {
	events *sse.Decoder
	event  func(ev sse.Event)
	end    func()
	limits protocol.Limits
	out    Out
}

// Out is where a format's event switch puts the messages of an event, and how it ends
// the stream.
type Out struct {
	queue queue
	err   error
	done  bool
}

// InitEventDecoder makes d the decoder of the SSE body r, with default limits, and
// returns the Out its switch writes to. event is the format's switch: given one event,
// whose Data is borrowed and valid only during the call, it pushes the messages the
// event produces, if any, and calls Finish when the event completes the stream or Fail
// when it breaks it. end is called when the body ends cleanly before Finish; it calls
// Finish (a stream the format counts as complete) or Fail. When it calls neither, the
// stream fails as cut short.
func InitEventDecoder(d *EventDecoder, r io.Reader, event func(ev sse.Event), end func()) *Out {
	*d = EventDecoder{events: sse.NewDecoder(r), event: event, end: end}
	d.SetLimits(protocol.Limits{})
	return &d.out
}

// SetLimits bounds what the decoder holds (Limited); call it before the first Next.
// Its SSE lines are bounded to MaxLine(l), and the switch reads the rest in Limits.
func (d *EventDecoder) SetLimits(l protocol.Limits) {
	d.limits = l.WithDefaults()
	d.events.SetMaxLine(MaxLine(d.limits))
}

// Limits returns the limits in force, their defaults filled in.
func (d *EventDecoder) Limits() protocol.Limits { return d.limits }

// Next advances to the next message. It returns false once the stream is complete or
// failed (see Err), after the messages pushed before that.
func (d *EventDecoder) Next() bool {
	for !d.out.queue.Next() {
		if d.out.done || d.out.err != nil {
			return false
		}
		d.step()
	}
	return true
}

// Message returns the message read by the last successful Next.
func (d *EventDecoder) Message() protocol.Message { return d.out.queue.Message() }

// Err returns nil after a complete stream, otherwise why it is incomplete: an *Error
// for anything the server sent, or the body's read error.
func (d *EventDecoder) Err() error { return d.out.err }

// Push queues ms, in order, after the messages pushed before.
func (o *Out) Push(ms ...protocol.Message) { o.queue.Push(ms...) }

// Fail ends the stream with err once the messages pushed so far are read; a later
// Fail in the same event replaces it.
func (o *Out) Fail(err error) { o.err = err }

// Finish ends the stream as complete once the messages pushed so far are read: no
// further event is read.
func (o *Out) Finish() { o.done = true }

// step reads one SSE event and passes it to the switch, or ends the stream.
func (d *EventDecoder) step() {
	if d.events.Next() {
		if ev := d.events.Borrow(); !ev.Comment { // keep-alives (": OPENROUTER PROCESSING")
			d.event(ev)
		}
		return
	}
	if err := d.events.Err(); err != nil {
		d.out.err = readError(err)
		return
	}
	d.end()
	if !d.out.done && d.out.err == nil {
		d.out.err = &Error{Kind: protocol.ErrStream, Message: "stream ended before its last event"}
	}
}

// readError is the error of an SSE stream that failed: a line or an event past its
// bound is a response too large, which a retry would only repeat.
func readError(err error) error {
	if errors.Is(err, sse.ErrLineTooLong) || errors.Is(err, sse.ErrEventTooLong) {
		return &Error{Kind: protocol.ErrTooLarge, ShouldRetry: RetryNo, Message: "response too large: read event: " + err.Error()}
	}
	return err
}

package anthropic

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/textcut"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/jsonscan"
	"github.com/agentrun/agentrun/transport/sse"
)

// Decoder turns one Anthropic streaming response body into protocol messages,
// Scanner-shaped; it implements transport.Decoder and is not safe for concurrent use.
//
// Text and thinking deltas become messages as they arrive. Content blocks are tracked
// by index, so deltas and stops of different blocks may interleave. A thinking block's
// signature becomes a KindThinking message with Signature set at the block's
// content_block_stop; a redacted_thinking block becomes a KindThinking message with
// Redacted set at its start. A tool_use block becomes one KindToolCall at its
// content_block_stop, its input the concatenated input_json_delta fragments ("{}" when
// there are none). message_stop ends the stream with one KindUsage (message_start's
// counts, each replaced by message_delta's when present) and one KindStop carrying the
// stop reason as the API gave it: the API's words are protocol.StopReason's.
//
// A tool_use block still open at message_stop is emitted with its partial input, unless
// the stop reason is max_tokens: then its input is truncated by construction and a tool
// must not run on it, so the call is dropped and the max_tokens stop tells the loop the
// turn failed. A content_block_start at the index of a block still open closes that
// block first (Ollama does this), keeping both. Server tool blocks, citations, pings and unknown events are ignored.
//
// Err is nil only after message_stop. An error event gives an *transport.Error whose
// Kind follows the API's error type; a body that ends before message_stop, or a data
// line that is not valid JSON, gives an *transport.Error of Kind protocol.ErrStream.
// A read error of the body is returned as it is. A tool input past its limit, and a
// thinking signature past the response limit, end the stream with an
// *transport.Error of Kind protocol.ErrTooLarge (the limits of SetLimits).
type Decoder struct {
	// EventDecoder gives Next, Message, Err and SetLimits; event is its switch,
	// which writes to out.
	transport.EventDecoder
	out    *transport.Out
	blocks map[int]*block
	usage  protocol.Usage
	reason protocol.StopReason

	wire wireEvent        // the event being applied, reused to spare an allocation per event
	scan jsonscan.Scanner // reads the events' data
	// displaced counts blocks closed by a start at their index, whose own stops may
	// still come (under another index).
	displaced int
}

// block is the state of one open content block.
type block struct {
	typ       string
	id, name  string
	input     []byte          // the input_json_delta fragments so far
	start     json.RawMessage // the input given in content_block_start
	signature string
}

// NewDecoder returns a decoder reading the SSE body r.
func NewDecoder(r io.Reader) *Decoder {
	d := &Decoder{blocks: map[int]*block{}}
	d.out = transport.InitEventDecoder(&d.EventDecoder, r, d.event, d.end)
	return d
}

// end fails a stream whose body ended cleanly before message_stop.
func (d *Decoder) end() {
	d.out.Fail(&transport.Error{Kind: protocol.ErrStream, Message: "stream ended without message_stop"})
}

func (d *Decoder) fail(format string, args ...any) {
	d.out.Fail(&transport.Error{Kind: protocol.ErrStream, Message: fmt.Sprintf(format, args...)})
}

// event applies one SSE event, whose data is borrowed: nothing may keep it. The data's
// type member decides what the event is; the SSE event name only names a payload that
// is not valid JSON.
func (d *Decoder) event(e sse.Event) {
	d.wire = wireEvent{}
	w := &d.wire
	if err := parseEvent(&d.scan, e.Data, w); err != nil {
		name := e.Type
		if name == "" {
			name = "unnamed"
		}
		d.fail("malformed %s event: %v: %q", name, err, textcut.Clip(string(e.Data), 80, textcut.Ellipsis))
		return
	}
	switch w.Type {
	case "content_block_delta":
		d.delta(w)
	case "content_block_start":
		d.blockStart(w)
	case "content_block_stop":
		d.blockStop(w.Index)
	case "message_start":
		if w.Message != nil {
			d.usage = protocol.Usage{}
			d.replaceUsage(&w.Message.Usage)
		}
	case "message_delta":
		if w.Delta.StopReason != nil {
			d.reason = protocol.StopReason(*w.Delta.StopReason)
		}
		if w.Usage != nil {
			d.replaceUsage(w.Usage)
		}
	case "message_stop":
		d.messageStop()
	case "error":
		d.streamError(w.Error, w.RequestID)
	}
	// ping and event types added to the API later are ignored.
}

func (d *Decoder) blockStart(w *wireEvent) {
	cb := w.ContentBlock
	if cb == nil {
		d.fail("content_block_start for block %d without content_block", w.Index)
		return
	}
	if old, open := d.blocks[w.Index]; open {
		// Some servers (Ollama) start a block at the index of one still open: the start
		// closes the old block, and one stray stop later is forgiven.
		delete(d.blocks, w.Index)
		d.finish(old)
		d.displaced++
	}
	d.blocks[w.Index] = &block{typ: cb.Type, id: cb.ID, name: cb.Name, start: cb.Input}
	switch cb.Type {
	case "text":
		if cb.Text != "" {
			d.out.Push(protocol.Message{Kind: protocol.KindText, Text: cb.Text})
		}
	case "thinking":
		if cb.Thinking != "" {
			d.out.Push(protocol.Message{Kind: protocol.KindThinking, Text: cb.Thinking})
		}
	case "redacted_thinking":
		d.out.Push(protocol.Message{Kind: protocol.KindThinking, Redacted: cb.Data})
	}
}

func (d *Decoder) delta(w *wireEvent) {
	b, open := d.blocks[w.Index]
	if !open {
		d.fail("content_block_delta for block %d, which is not open", w.Index)
		return
	}
	switch w.Delta.Type {
	case "text_delta":
		if w.Delta.Text != "" {
			d.out.Push(protocol.Message{Kind: protocol.KindText, Text: w.Delta.Text})
		}
	case "thinking_delta":
		if w.Delta.Thinking != "" {
			d.out.Push(protocol.Message{Kind: protocol.KindThinking, Text: w.Delta.Thinking})
		}
	case "signature_delta":
		if limit := d.Limits().MaxResponseBytes; int64(len(b.signature)+len(w.Delta.Signature)) > limit {
			d.out.Fail(transport.TooLarge("a thinking signature", limit, "max_response_bytes"))
			return
		}
		b.signature += w.Delta.Signature
	case "input_json_delta":
		if b.typ != "tool_use" {
			break
		}
		if limit := d.Limits().MaxToolInputBytes; int64(len(b.input)+len(w.Delta.PartialJSON)) > limit {
			b.input = nil
			d.out.Fail(transport.TooLarge("the input of tool call "+b.name, limit, "max_tool_input_bytes"))
			return
		}
		b.input = append(b.input, w.Delta.PartialJSON...)
	}
	// citations_delta and delta types added later are ignored.
}

func (d *Decoder) blockStop(index int) {
	b, open := d.blocks[index]
	if !open && d.displaced > 0 {
		d.displaced-- // the stop of a block a later start closed, under another index
		return
	}
	if !open {
		d.fail("content_block_stop for block %d, which is not open", index)
		return
	}
	delete(d.blocks, index)
	d.finish(b)
}

// finish emits what a closed block holds back until its end.
func (d *Decoder) finish(b *block) {
	if b.signature != "" {
		d.out.Push(protocol.Message{Kind: protocol.KindThinking, Signature: b.signature})
	}
	if b.typ == "tool_use" {
		d.out.Push(protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: b.name, ID: b.id, Input: b.toolInput()}})
	}
}

// toolInput is the tool's input JSON: the fragments if there are any, else the input
// of content_block_start, else "{}".
func (b *block) toolInput() string {
	if !blank(b.input) {
		return string(b.input)
	}
	if !blank(b.start) && string(b.start) != "null" {
		return string(b.start)
	}
	return "{}"
}

func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

func (d *Decoder) messageStop() {
	open := make([]int, 0, len(d.blocks))
	for i := range d.blocks {
		open = append(open, i)
	}
	slices.Sort(open)
	for _, i := range open {
		b := d.blocks[i]
		delete(d.blocks, i)
		if b.typ == "tool_use" && d.reason == protocol.StopMaxTokens {
			continue // truncated input: see the Decoder comment
		}
		d.finish(b)
	}
	d.out.Push(protocol.Message{Kind: protocol.KindUsage, Usage: d.usage})
	d.out.Push(protocol.Message{Kind: protocol.KindStop, Stop: d.reason})
	d.out.Finish()
}

// replaceUsage overwrites the counts present in u: the API's counts are cumulative.
func (d *Decoder) replaceUsage(u *wireUsage) {
	set := func(dst *int64, src *int64) {
		if src != nil {
			*dst = *src
		}
	}
	set(&d.usage.Input, u.InputTokens)
	set(&d.usage.Output, u.OutputTokens)
	set(&d.usage.CacheRead, u.CacheReadInputTokens)
	set(&d.usage.CacheCreation, u.CacheCreationInputTokens)
}

// streamError turns an error event into the decoder's error.
func (d *Decoder) streamError(e *wireError, requestID string) {
	var we wireError
	if e != nil {
		we = *e
	}
	kind := protocol.KindForType(we.Type)
	if kind == "" {
		kind = protocol.ErrServer
	}
	msg := errorText(we, requestID)
	if msg == "" {
		msg = "error event without details"
	}
	d.out.Fail(&transport.Error{Kind: kind, Message: msg})
}

// PartialUsage returns the usage that arrived so far, also when the stream failed: a
// stream cut that no retry repairs still cost those tokens.
func (d *Decoder) PartialUsage() protocol.Usage { return d.usage }

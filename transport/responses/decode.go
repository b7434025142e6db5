package responses

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/jsonscan"
	"github.com/agentrun/agentrun/transport/openai/wire"
	"github.com/agentrun/agentrun/transport/sse"
)

// Decoder turns a Responses API event stream into protocol messages: text and thinking
// (raw reasoning or reasoning summaries) deltas as they arrive, each function call
// once when its output item is done (or at response.completed, in output order), then
// usage and one stop at response.completed or response.incomplete. response.failed and
// error events end the stream with a classified *transport.Error, and so does a body
// that ends without a terminal event. Unknown events are ignored. It is not safe for
// concurrent use.
type Decoder struct {
	events *sse.Decoder
	head   *wire.HeadReader // the body until the first event

	queue transport.Queue
	err   error
	done  bool

	limits   protocol.Limits
	scan     jsonscan.Scanner // reads the events
	ev       event            // the event being applied, reused to spare an allocation
	spare    spare            // what the events are read into besides ev
	sawEvent bool
	refused  bool
	calls    []*fnCall // in arrival order
	byItem   map[string]*fnCall
	byOutput map[int]*fnCall
	emitted  int // function calls yielded so far
}

// fnCall is one function call being accumulated.
type fnCall struct {
	outputIndex int
	itemID      string
	callID      string
	name        string
	args        []byte
	emitted     bool
}

// NewDecoder returns a decoder reading the response body r.
func NewDecoder(r io.Reader) *Decoder {
	h := wire.NewHeadReader(r)
	d := &Decoder{events: sse.NewDecoder(h), head: h, byItem: map[string]*fnCall{}, byOutput: map[int]*fnCall{}}
	d.SetLimits(protocol.Limits{})
	return d
}

// SetLimits bounds what the decoder holds (transport.Limited); call it before the
// first Next. A function call's arguments past the tool input limit end the stream
// with an error of Kind protocol.ErrTooLarge, and so does an SSE line past
// transport.MaxLine.
func (d *Decoder) SetLimits(l protocol.Limits) {
	d.limits = l.WithDefaults()
	d.events.SetMaxLine(transport.MaxLine(d.limits))
}

// checkArgs fails the stream when c's arguments passed the tool input limit, and
// drops them.
func (d *Decoder) checkArgs(c *fnCall) {
	if int64(len(c.args)) > d.limits.MaxToolInputBytes {
		c.args = nil
		d.err = transport.TooLarge("the input of tool call "+c.name, d.limits.MaxToolInputBytes, "max_tool_input_bytes")
	}
}

// Message returns the message read by the last successful Next.
func (d *Decoder) Message() protocol.Message { return d.queue.Message() }

// Err returns nil after a complete stream, otherwise why it is incomplete: a
// *transport.Error for anything the server sent, or the body's read error.
func (d *Decoder) Err() error { return d.err }

// Next advances to the next message. It returns false at the end of the stream or on
// an error.
func (d *Decoder) Next() bool {
	for !d.queue.Next() {
		if !d.fill() {
			return false
		}
	}
	return true
}

// fill decodes until the queue has a message or the stream is over.
func (d *Decoder) fill() bool {
	if d.done || d.err != nil {
		return false
	}
	d.step()
	return true
}

// step reads one SSE event and queues what it produces.
func (d *Decoder) step() {
	if !d.events.Next() {
		d.end()
		return
	}
	ev := d.events.Borrow() // data valid until the next event: nothing below keeps it
	data := bytes.TrimSpace(ev.Data)
	if ev.Comment || len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
		return
	}
	if !d.sawEvent {
		d.sawEvent = true
		d.head.Stop()
	}
	e := &d.ev
	*e = event{}
	if err := parseEvent(&d.scan, data, e, &d.spare); err != nil {
		d.err = &transport.Error{Kind: protocol.ErrStream,
			Message: "decode event: " + wire.JSONProblem(err, "an event") + ": " + wire.Clip(data)}
		return
	}
	d.spare.itemID = e.ItemID
	typ := e.Type
	if typ == "" {
		if e, ok := wire.ParseError(data); ok {
			d.err = transportError(e, "error")
			return
		}
		typ = ev.Type
	}
	if !handled(typ) {
		return // built-in tool events, content parts, lifecycle events, future events
	}
	d.apply(typ, e)
}

// handled reports whether the decoder reads events of type typ.
func handled(typ string) bool {
	switch typ {
	case "response.output_text.delta", "response.refusal.delta",
		"response.reasoning_text.delta", "response.reasoning_summary_text.delta",
		"response.reasoning_summary_part.added",
		"response.output_item.added", "response.output_item.done",
		"response.function_call_arguments.delta", "response.function_call_arguments.done",
		"response.completed", "response.incomplete", "response.failed", "error":
		return true
	}
	return false
}

// apply queues the output of one handled event.
func (d *Decoder) apply(typ string, e *event) {
	switch typ {
	case "response.output_text.delta":
		d.emit(protocol.KindText, e.Delta)
	case "response.refusal.delta":
		d.refused = d.refused || e.Delta != ""
		d.emit(protocol.KindText, e.Delta)
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		d.emit(protocol.KindThinking, e.Delta)
	case "response.reasoning_summary_part.added":
		if e.SummaryIndex > 0 {
			d.emit(protocol.KindThinking, "\n\n") // summary parts are paragraphs
		}
	case "response.output_item.added":
		if e.Item != nil && e.Item.Type == "function_call" {
			c := d.callFor(e.OutputIndex, e.Item.ID)
			c.update(e.Item)
		}
	case "response.function_call_arguments.delta":
		c := d.callFor(e.OutputIndex, e.ItemID)
		if int64(len(c.args)+len(e.Delta)) > d.limits.MaxToolInputBytes {
			c.args = c.args[:0:0]
			d.err = transport.TooLarge("the input of tool call "+c.name, d.limits.MaxToolInputBytes, "max_tool_input_bytes")
			return
		}
		c.args = append(c.args, e.Delta...)
	case "response.function_call_arguments.done":
		c := d.callFor(e.OutputIndex, e.ItemID)
		if e.Arguments != nil {
			c.args = append(c.args[:0], *e.Arguments...)
			d.checkArgs(c)
		}
		if c.name == "" {
			c.name = e.Name
		}
	case "response.output_item.done":
		if e.Item != nil && e.Item.Type == "function_call" {
			c := d.callFor(e.OutputIndex, e.Item.ID)
			c.update(e.Item)
			if d.checkArgs(c); d.err != nil {
				return
			}
			d.emitCall(c)
		}
	case "response.completed":
		d.flushCalls()
		reason := protocol.StopEndTurn
		switch {
		case e.Response.atLimit():
			// Some servers (Ollama) report completed when the answer stopped at
			// max_output_tokens: the answer is truncated, whatever the status says.
			reason = protocol.StopMaxTokens
		case d.emitted > 0:
			reason = protocol.StopToolUse
		case d.refused:
			reason = protocol.StopRefusal
		}
		d.finish(e, reason)
	case "response.incomplete":
		var why string
		if e.Response != nil && e.Response.IncompleteDetails != nil {
			why = e.Response.IncompleteDetails.Reason
		}
		d.finish(e, incompleteReason(why))
	case "response.failed":
		var ae wire.APIError
		if e.Response != nil && e.Response.Error != nil {
			ae = e.Response.Error.APIError()
		}
		d.err = transportError(ae, "response failed")
	case "error":
		o := e.ErrorObject
		if e.Error != nil {
			o = *e.Error
		}
		d.err = transportError(o.APIError(), "error event")
	}
}

func (d *Decoder) emit(kind protocol.Kind, text string) {
	if text != "" {
		d.queue.Push(protocol.Message{Kind: kind, Text: text})
	}
}

// callFor returns the call an event belongs to, by item id, then by output index (only
// when the ids do not disagree), and
// the latest call when the event names neither; it opens a new call when none fits.
func (d *Decoder) callFor(outputIndex *int, itemID string) *fnCall {
	c := d.byItem[itemID]
	if c == nil && outputIndex != nil {
		// Some servers (Ollama) give every call of a turn the same output index: an
		// index only names a call whose item id is unknown or the same.
		if oc := d.byOutput[*outputIndex]; oc != nil && (itemID == "" || oc.itemID == "") {
			c = oc
		}
	}
	if c == nil && outputIndex == nil && itemID == "" && len(d.calls) > 0 {
		c = d.calls[len(d.calls)-1]
	}
	if c == nil {
		c = &fnCall{outputIndex: len(d.calls)}
		if outputIndex != nil {
			c.outputIndex = *outputIndex
		}
		d.calls = append(d.calls, c)
		d.byOutput[c.outputIndex] = c
	}
	if c.itemID == "" && itemID != "" {
		c.itemID = itemID
		d.byItem[itemID] = c
	}
	return c
}

// update takes what a function_call item says; the item's full arguments win over the
// deltas.
func (c *fnCall) update(it *item) {
	if it.CallID != "" {
		c.callID = it.CallID
	}
	if it.Name != "" {
		c.name = it.Name
	}
	if it.Arguments != nil && (*it.Arguments != "" || len(c.args) == 0) {
		c.args = append(c.args[:0], *it.Arguments...)
	}
}

// emitCall queues c unless it was queued before. A call without a name cannot be
// answered and is dropped; the call id falls back to the item id.
func (d *Decoder) emitCall(c *fnCall) {
	if c.emitted {
		return
	}
	c.emitted = true
	if c.name == "" {
		return
	}
	id := c.callID
	if id == "" {
		id = c.itemID
	}
	if id == "" {
		id = "call_" + strconv.Itoa(d.emitted)
	}
	input := string(bytes.TrimSpace(c.args))
	if input == "" {
		input = "{}"
	}
	d.queue.Push(protocol.Message{Kind: protocol.KindToolCall,
		Call: protocol.ToolCall{Name: c.name, ID: id, Input: input}})
	d.emitted++
}

// flushCalls queues the calls not yet queued, in output order.
func (d *Decoder) flushCalls() {
	pending := slices.Clone(d.calls)
	slices.SortStableFunc(pending, func(a, b *fnCall) int { return a.outputIndex - b.outputIndex })
	for _, c := range pending {
		d.emitCall(c)
	}
}

// finish queues usage and the stop, and ends the stream.
func (d *Decoder) finish(e *event, reason protocol.StopReason) {
	var u protocol.Usage
	if e.Response != nil && e.Response.Usage != nil {
		u = normalizeUsage(*e.Response.Usage)
	}
	d.queue.Push(protocol.Message{Kind: protocol.KindUsage, Usage: u},
		protocol.Message{Kind: protocol.KindStop, Stop: reason})
	d.done = true
}

// end handles the end of the body before a terminal event.
func (d *Decoder) end() {
	if err := d.events.Err(); err != nil {
		if errors.Is(err, sse.ErrLineTooLong) || errors.Is(err, sse.ErrEventTooLong) {
			d.err = &transport.Error{Kind: protocol.ErrTooLarge, ShouldRetry: -1, Message: "response too large: read event: " + err.Error()}
			return
		}
		d.err = err
		return
	}
	msg := "stream ended without response.completed"
	if !d.sawEvent {
		if e, ok := wire.ParseError(d.head.Head()); ok {
			d.err = transportError(e, "error")
			return
		}
		if len(bytes.TrimSpace(d.head.Head())) > 0 {
			msg += "; body: " + wire.Clip(d.head.Head())
		}
	}
	d.err = &transport.Error{Kind: protocol.ErrStream, Message: msg}
}

// normalizeUsage converts Responses usage to the internal form, where input excludes
// cached tokens.
func normalizeUsage(u usage) protocol.Usage {
	cached := u.CachedTokens
	if u.InputTokensDetails != nil && u.InputTokensDetails.CachedTokens > 0 {
		cached = u.InputTokensDetails.CachedTokens
	}
	cached = max(cached, 0)
	return protocol.Usage{
		Input:     max(u.InputTokens-cached, 0),
		Output:    max(u.OutputTokens, 0),
		CacheRead: cached,
	}
}

// incompleteReason maps the reason of a response.incomplete onto a stop reason; a
// reason it does not know is carried as it came, and a missing one is "incomplete".
func incompleteReason(why string) protocol.StopReason {
	switch why {
	case "max_output_tokens":
		return protocol.StopMaxTokens
	case "content_filter":
		return protocol.StopRefusal
	case "":
		return "incomplete"
	}
	return protocol.StopReason(why)
}

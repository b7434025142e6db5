package responses

import (
	"bytes"
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
// that ends without a terminal event, and function call arguments past the tool input
// limit of SetLimits (Kind protocol.ErrTooLarge). Unknown events are ignored. It is not
// safe for concurrent use.
type Decoder struct {
	// EventDecoder gives Next, Message, Err and SetLimits; event is its switch,
	// which writes to out.
	transport.EventDecoder
	out  *transport.Out
	head *wire.HeadReader // the body until the first event

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
	d := &Decoder{head: h, byItem: map[string]*fnCall{}, byOutput: map[int]*fnCall{}}
	d.out = transport.InitEventDecoder(&d.EventDecoder, h, d.event, d.end)
	return d
}

// checkArgs fails the stream when c's arguments passed the tool input limit, and
// drops them.
func (d *Decoder) checkArgs(c *fnCall) {
	if limit := d.Limits().MaxToolInputBytes; int64(len(c.args)) > limit {
		c.args = nil
		d.out.Fail(transport.TooLarge("the input of tool call "+c.name, limit, "max_tool_input_bytes"))
	}
}

// event applies one SSE event, whose data is borrowed: nothing below keeps it.
func (d *Decoder) event(ev sse.Event) {
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
		return
	}
	if !d.sawEvent {
		d.sawEvent = true
		d.head.Stop()
	}
	e := &d.ev
	*e = event{}
	if err := parseEvent(&d.scan, data, e, &d.spare); err != nil {
		d.out.Fail(&transport.Error{Kind: protocol.ErrStream,
			Message: "decode event: " + wire.JSONProblem(err, "an event") + ": " + wire.Clip(data)})
		return
	}
	d.spare.itemID = e.ItemID
	typ := e.Type
	if typ == "" {
		if e, ok := wire.ParseError(data); ok {
			d.out.Fail(e.TransportError("error body"))
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
		if limit := d.Limits().MaxToolInputBytes; int64(len(c.args)+len(e.Delta)) > limit {
			c.args = c.args[:0:0]
			d.out.Fail(transport.TooLarge("the input of tool call "+c.name, limit, "max_tool_input_bytes"))
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
			if d.checkArgs(c); d.Err() != nil {
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
		d.out.Fail(ae.TransportError("response failed"))
	case "error":
		o := e.ErrorObject
		if e.Error != nil {
			o = *e.Error
		}
		d.out.Fail(o.APIError().TransportError("error event"))
	}
}

func (d *Decoder) emit(kind protocol.Kind, text string) {
	if text != "" {
		d.out.Push(protocol.Message{Kind: kind, Text: text})
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
	d.out.Push(protocol.Message{Kind: protocol.KindToolCall,
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
	d.out.Push(protocol.Message{Kind: protocol.KindUsage, Usage: u},
		protocol.Message{Kind: protocol.KindStop, Stop: reason})
	d.out.Finish()
}

// end handles the clean end of the body before a terminal event.
func (d *Decoder) end() {
	msg := "stream ended without response.completed"
	if !d.sawEvent {
		if e, ok := wire.ParseError(d.head.Head()); ok {
			d.out.Fail(e.TransportError("error body"))
			return
		}
		if len(bytes.TrimSpace(d.head.Head())) > 0 {
			msg += "; body: " + wire.Clip(d.head.Head())
		}
	}
	d.out.Fail(&transport.Error{Kind: protocol.ErrStream, Message: msg})
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

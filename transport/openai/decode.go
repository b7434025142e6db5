package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/jsonscan"
	"github.com/agentrun/agentrun/transport/openai/wire"
	"github.com/agentrun/agentrun/transport/sse"
)

// Decoder turns a Chat Completions chunk stream into protocol messages. It yields text
// and thinking deltas as they arrive, each complete tool call (in index order) once a
// finish_reason arrives, then one usage and one stop at "data: [DONE]".
//
// A stream that ends with a finish_reason but without [DONE] is treated as complete:
// the model said it was done, and only a usage chunk can have been lost, so its usage
// is the last one seen (zero when none was). A stream that ends with neither is
// incomplete (ErrStream). Error chunks, in every shape servers use, end the stream
// with a classified *transport.Error, and so does a tool input past its limit (Kind
// protocol.ErrTooLarge, under the limits of SetLimits). It is not safe for concurrent use.
type Decoder struct {
	// EventDecoder gives Next, Message, Err and SetLimits; event is its switch,
	// which writes to out.
	transport.EventDecoder
	out  *transport.Out
	head *wire.HeadReader // the body until the first data event

	sawData bool
	finish  string // the first finish_reason seen
	refused bool
	usage   protocol.Usage

	scan  jsonscan.Scanner // reads the chunks
	chunk chunk            // the chunk being applied, reused to spare allocations

	calls   []*call // open calls, in arrival order
	byIndex map[int]*call
	byID    map[string]*call // the first open call, in arrival order, with an id
	next    int              // one past the highest open index
	last    *call
	emitted int // tool calls yielded so far
}

// call is one tool call being accumulated.
type call struct {
	index    int
	pos      int // arrival order
	id, name string
	args     []byte
}

// NewDecoder returns a decoder reading the response body r.
func NewDecoder(r io.Reader) *Decoder {
	h := wire.NewHeadReader(r)
	d := &Decoder{head: h, byIndex: map[int]*call{}, byID: map[string]*call{}}
	d.out = transport.InitEventDecoder(&d.EventDecoder, h, d.event, d.end)
	return d
}

// event applies one SSE event, whose data is borrowed: nothing below keeps it.
func (d *Decoder) event(ev sse.Event) {
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 {
		return
	}
	if !d.sawData {
		d.sawData = true
		d.head.Stop()
	}
	if bytes.HasPrefix(data, []byte("[DONE]")) {
		d.complete()
		return
	}
	if ev.Type == "error" {
		d.out.Fail(eventError(data).TransportError("error event"))
		return
	}
	c := &d.chunk
	if err := parseChunk(&d.scan, data, c); err != nil {
		d.out.Fail(&transport.Error{Kind: protocol.ErrStream,
			Message: "decode chunk: " + wire.JSONProblem(err, "a chunk") + ": " + wire.Clip(data)})
		return
	}
	if c.isError() {
		e, _ := wire.ParseErrorOrDetail(data) // an error chunk always has a shape it reads
		d.out.Fail(e.TransportError("error chunk"))
		return
	}
	if c.Usage != nil {
		d.usage = normalizeUsage(*c.Usage)
	}
	for i := range c.Choices {
		if c.Choices[i].Index == 0 {
			d.apply(&c.Choices[i])
			break
		}
	}
}

// eventError reads the payload of an "event: error" SSE event, which some servers send
// instead of an error chunk: an error body, a bare {"message",...} object, or text.
func eventError(data []byte) wire.APIError {
	if e, ok := wire.ParseErrorOrDetail(data); ok {
		return e
	}
	var o wire.ErrorObject
	if err := json.Unmarshal(data, &o); err == nil {
		if e := o.APIError(); e.Message != "" {
			return e
		}
	}
	return wire.APIError{Message: wire.Clip(data)}
}

// apply queues the output of the first choice.
func (d *Decoder) apply(ch *choice) {
	dl := ch.Delta
	switch {
	case dl.ReasoningContent != "":
		d.out.Push(protocol.Message{Kind: protocol.KindThinking, Text: dl.ReasoningContent})
	case dl.Reasoning != "":
		d.out.Push(protocol.Message{Kind: protocol.KindThinking, Text: dl.Reasoning})
	}
	if dl.Content != "" {
		d.out.Push(protocol.Message{Kind: protocol.KindText, Text: dl.Content})
	}
	if dl.Refusal != "" {
		d.refused = true
		d.out.Push(protocol.Message{Kind: protocol.KindText, Text: dl.Refusal})
	}
	for _, tc := range dl.ToolCalls {
		d.addCall(tc.Index, tc.ID, tc.Function)
	}
	if dl.FunctionCall != nil {
		d.addCall(nil, "", *dl.FunctionCall)
	}
	switch ch.FinishReason {
	case "":
	case "error":
		d.out.Fail(&transport.Error{Kind: protocol.ErrServer, Message: "stream ended with finish_reason error"})
	default:
		if d.finish == "" {
			d.finish = ch.FinishReason
		}
		d.flushCalls()
	}
}

// addCall merges one tool call fragment. id and name are set from the first
// non-empty value and never concatenated; arguments are appended.
func (d *Decoder) addCall(index *int, id string, fn functionDelta) {
	c := d.findCall(index, id)
	if c.id == "" && id != "" {
		c.id = id
		if o := d.byID[id]; o == nil || c.pos < o.pos {
			d.byID[id] = c
		}
	}
	if c.name == "" {
		c.name = fn.Name
	}
	c.args = appendArguments(&d.scan, c.args, fn.Arguments)
	d.last = c
	if limit := d.Limits().MaxToolInputBytes; int64(len(c.args)) > limit {
		c.args = nil
		d.out.Fail(transport.TooLarge("the input of tool call "+c.name, limit, "max_tool_input_bytes"))
	}
}

// findCall returns the call a fragment belongs to, opening a new one when needed. A
// fragment with an index belongs to the call of that index (-1 counts as 0) unless its
// id differs; without an index, a new id opens a new call, and no id at all means the
// last call.
func (d *Decoder) findCall(index *int, id string) *call {
	if index != nil {
		i := max(*index, 0)
		if c := d.byIndex[i]; c != nil && (id == "" || c.id == "" || c.id == id) {
			return c
		}
		return d.newCall(i)
	}
	if id != "" {
		if c := d.byID[id]; c != nil {
			return c
		}
		return d.newCall(d.next)
	}
	if d.last != nil {
		return d.last
	}
	return d.newCall(d.next)
}

func (d *Decoder) newCall(index int) *call {
	c := &call{index: index, pos: len(d.calls)}
	d.calls = append(d.calls, c)
	d.byIndex[index] = c
	d.next = max(d.next, index+1)
	return c
}

// appendArguments appends an arguments fragment: a JSON string is unquoted (by s, which
// must not be reading anything else), an object sent as such is taken verbatim.
func appendArguments(s *jsonscan.Scanner, dst []byte, raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return dst
	}
	s.Reset(raw)
	if t, ok := s.Text(); ok && s.End() {
		return append(dst, t...)
	}
	return append(dst, raw...)
}

// flushCalls queues the open tool calls in index order (arrival order within one
// index). A call that never got a name cannot be answered and is dropped; a call
// without an id gets one, since the tool result must name it.
func (d *Decoder) flushCalls() {
	slices.SortStableFunc(d.calls, func(a, b *call) int { return a.index - b.index })
	for _, c := range d.calls {
		if c.name == "" {
			continue
		}
		id := c.id
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
	d.calls = d.calls[:0]
	clear(d.byIndex)
	clear(d.byID)
	d.next = 0
	d.last = nil
}

// complete ends a finished stream: pending tool calls, usage, stop.
func (d *Decoder) complete() {
	d.flushCalls()
	d.out.Push(protocol.Message{Kind: protocol.KindUsage, Usage: d.usage},
		protocol.Message{Kind: protocol.KindStop, Stop: d.stopReason()})
	d.out.Finish()
}

// end handles the clean end of the body without [DONE].
func (d *Decoder) end() {
	if d.finish != "" {
		d.complete()
		return
	}
	msg := "stream ended without [DONE]"
	if !d.sawData {
		if e, ok := wire.ParseErrorOrDetail(d.head.Head()); ok {
			d.out.Fail(e.TransportError("error body"))
			return
		}
		if len(bytes.TrimSpace(d.head.Head())) > 0 {
			msg += "; body: " + wire.Clip(d.head.Head())
		}
	}
	d.out.Fail(&transport.Error{Kind: protocol.ErrStream, Message: msg})
}

// stopReason maps the finish_reason to the internal stop reason. Tool use is derived
// from the calls actually made, since several servers say "stop" for tool calls.
func (d *Decoder) stopReason() protocol.StopReason {
	switch d.finish {
	case "length":
		return protocol.StopMaxTokens
	case "content_filter":
		return protocol.StopRefusal
	}
	if d.emitted > 0 {
		return protocol.StopToolUse
	}
	switch d.finish {
	case "", "stop", "eos", "end_turn", "stop_sequence", "tool_calls", "function_call":
		if d.refused {
			return protocol.StopRefusal
		}
		return protocol.StopEndTurn
	}
	return protocol.StopReason(d.finish)
}

// normalizeUsage converts Chat usage to the internal form, where input excludes cached
// tokens.
func normalizeUsage(u usage) protocol.Usage {
	cached := u.PromptCacheHitTokens
	if u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens > 0 {
		cached = u.PromptTokensDetails.CachedTokens
	}
	cached = max(cached, 0)
	return protocol.Usage{
		Input:     max(u.PromptTokens-cached, 0),
		Output:    max(u.CompletionTokens, 0),
		CacheRead: cached,
	}
}

// PartialUsage returns the usage that arrived so far, also when the stream failed: a
// stream cut that no retry repairs still cost those tokens.
func (d *Decoder) PartialUsage() protocol.Usage { return d.usage }

package scripted

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentrun/agentrun/protocol"
)

// response is one answer, ready to be rendered in-process or in any wire format.
type response struct {
	step      int // the script step, -1 for a compaction summary
	thinking  string
	signature string
	text      string
	calls     []protocol.ToolCall
	stop      protocol.StopReason
	usage     protocol.Usage
	// fault is the failure of this attempt, nil when it succeeds.
	fault *Fault
}

// finish turns step st, answered at step index step, into a response to req.
func (m *Model) finish(req protocol.Request, step int, st Step, fault *Fault) *response {
	r := &response{step: step, thinking: st.Thinking, text: st.Text, stop: st.Stop, fault: fault}
	if r.stop == "" {
		r.stop = protocol.StopEndTurn
		if len(st.ToolCalls) > 0 {
			r.stop = protocol.StopToolUse
		}
	}
	if r.thinking != "" {
		r.signature = signature(r.thinking)
	}
	out := len(r.thinking) + len(r.text)
	for i, c := range st.ToolCalls {
		r.calls = append(r.calls, protocol.ToolCall{Name: c.Name, ID: callID(req.Parent, step, i), Input: c.Input})
		out += len(c.Input)
	}
	r.usage = protocol.Usage{Input: int64(m.measure(req) / 4), Output: int64(out / 4)}
	if u := st.Usage; u != nil {
		if u.Input != nil {
			r.usage.Input = *u.Input
		}
		if u.Output != nil {
			r.usage.Output = *u.Output
		}
		r.usage.CacheRead, r.usage.CacheCreation = u.CacheRead, u.CacheCreation
	}
	return r
}

// signature is the deterministic signature of a thinking block.
func signature(thinking string) string {
	sum := sha256.Sum256([]byte(thinking))
	return "sig_" + hex.EncodeToString(sum[:16])
}

// callID is the id of tool call i of step, in the agent whose requests name parent
// (protocol.Request.Parent): "tc_<step>_<i>" at the top, "<parent>.<step>_<i>" in a
// sub-agent. A Task call's id is the parent of its sub-agent, so ids are unique across
// a session and its sub-agents at every depth.
func callID(parent string, step, i int) string {
	return idPrefix(parent) + strconv.Itoa(step) + "_" + strconv.Itoa(i)
}

// idPrefix is what the tool-call ids of the agent of parent start with.
func idPrefix(parent string) string {
	if parent == "" {
		return "tc_"
	}
	return parent + "."
}

// parseCallID returns the step of a tool-use id that callID wrote with prefix.
func parseCallID(id, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok {
		return 0, false
	}
	step, _, ok := parseSegment(rest)
	return step, ok
}

// parseSegment reads "<step>_<i>", both at most nine decimal digits.
func parseSegment(seg string) (step, i int, ok bool) {
	s, c, ok := strings.Cut(seg, "_")
	if !ok || !digits(s) || !digits(c) {
		return 0, 0, false
	}
	step, _ = strconv.Atoi(s) // nine digits always convert
	i, _ = strconv.Atoi(c)
	return step, i, true
}

func digits(s string) bool {
	if len(s) == 0 || len(s) > 9 {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// agentSteps returns the steps the agent of parent plays: root at the top. A
// sub-agent's parent is the id of the Task call that started it, a chain
// "tc_<s>_<i>.<s>_<i>…" of the calls that led to it; each link selects call i of step
// s of the steps reached so far, and moves to that call's Steps when it has them. A
// parent of another form (an id this model did not write) plays root.
func agentSteps(root []Step, parent string) []Step {
	rest, ok := strings.CutPrefix(parent, "tc_")
	if !ok {
		return root
	}
	steps := root
	for seg := range strings.SplitSeq(rest, ".") {
		s, i, ok := parseSegment(seg)
		if !ok {
			return root
		}
		if s < len(steps) && i < len(steps[s].ToolCalls) && steps[s].ToolCalls[i].Steps != nil {
			steps = steps[s].ToolCalls[i].Steps
		}
	}
	return steps
}

// stepOf returns the script step a conversation is at: one past the largest step found
// in the tool_use and tool_result ids of its turns that carry prefix (0 when there is
// none), plus one for every assistant turn after the last turn holding that id, since
// a step without tool calls leaves no id behind. Old turns dropped by compaction do
// not matter as long as the latest tool round survives.
func stepOf(turns []protocol.Turn, prefix string) int {
	best, at := -1, -1
	for ti, t := range turns {
		for _, b := range t.Blocks {
			id := b.ID
			if b.Type == protocol.BlockToolResult {
				id = b.ToolUseID
			} else if b.Type != protocol.BlockToolUse {
				continue
			}
			if s, ok := parseCallID(id, prefix); ok && s >= best {
				best, at = s, ti
			}
		}
	}
	step := best + 1
	for _, t := range turns[at+1:] {
		if t.Role == protocol.RoleAssistant {
			step++
		}
	}
	return step
}

// emptySchema is the input schema measured for a tool that declares none: the one
// the transports send in its place.
const emptySchema = `{"type":"object","properties":{}}`

// measure returns the size in bytes of what a request shows the model: the system
// prompt, the text, tool inputs and tool results of its messages, and its tool specs.
// Thinking is left out, as not every wire format carries it back. JSON is measured in
// a canonical compact form, so every wire format gives the same measure.
func (m *Model) measure(req protocol.Request) int {
	n := len(req.System)
	for _, t := range req.Messages {
		for _, b := range t.Blocks {
			switch b.Type {
			case protocol.BlockText:
				n += len(b.Text)
			case protocol.BlockToolUse:
				n += m.lengths.of(b.Input, func(raw []byte) int { return jsonLen(raw, "{}") })
			case protocol.BlockToolResult:
				n += len(b.Content)
			case protocol.BlockThinking, protocol.BlockRedactedThinking:
			}
		}
	}
	for _, s := range req.Tools {
		n += len(s.Name) + len(s.Description) + m.lengths.of(s.InputSchema, func(raw []byte) int { return schemaLen(raw) })
	}
	return n
}

// schemaLen is the measure of a tool's input schema. The transports send different
// schemas for a tool that declares none ({"type":"object"} or the same with empty
// properties), so every schema that says only that counts as emptySchema.
func schemaLen(raw json.RawMessage) int {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil && len(m) <= 2 && string(m["type"]) == `"object"` {
		if p, ok := m["properties"]; len(m) == 1 || ok && jsonLen(p, "{}") == 2 {
			return len(emptySchema)
		}
	}
	return jsonLen(raw, emptySchema)
}

// jsonLen is the length of raw in canonical compact JSON (the length of empty when raw
// is empty or null, raw's own length when it is not JSON).
func jsonLen(raw json.RawMessage, empty string) int {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return len(empty)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return len(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return len(raw)
	}
	return b.Len() - 1 // Encode adds a newline
}

// unitKind says what a unit of output is.
type unitKind uint8

const (
	unitThinking  unitKind = iota + 1 // a thinking delta
	unitSignature                     // the end of the thinking block
	unitText                          // a text delta
	unitCall                          // a complete tool call
)

// unit is one piece of a response's output. Every form renders the same units, so
// deltas have the same boundaries in-process and in every wire format.
type unit struct {
	kind unitKind
	text string
	// call indexes response.calls; pieces are the fragments its input JSON is sent in.
	call   int
	pieces []string
}

// ticks is how many deltas a unit is sent as, each preceded by the chunk delay.
func (u unit) ticks() int {
	switch u.kind {
	case unitThinking, unitText:
		return 1
	case unitCall:
		return len(u.pieces)
	case unitSignature:
	}
	return 0
}

// units splits r's output into units, text and thinking in deltas of up to n runes.
func (r *response) units(n int) []unit {
	var us []unit
	for _, d := range chunks(r.thinking, n) {
		us = append(us, unit{kind: unitThinking, text: d})
	}
	if r.thinking != "" {
		us = append(us, unit{kind: unitSignature})
	}
	for _, d := range chunks(r.text, n) {
		us = append(us, unit{kind: unitText, text: d})
	}
	for i, c := range r.calls {
		us = append(us, unit{kind: unitCall, call: i, pieces: pieces(c.Input)})
	}
	return us
}

// sent returns the units an attempt sends: all of them, or those before the cut when
// the attempt fails.
func (r *response) sent(n int) []unit {
	us := r.units(n)
	if r.fault != nil {
		return us[:cutIndex(us)]
	}
	return us
}

// message is the in-process form of unit u.
func (r *response) message(u unit) protocol.Message {
	switch u.kind {
	case unitThinking:
		return protocol.Message{Kind: protocol.KindThinking, Text: u.text}
	case unitSignature:
		return protocol.Message{Kind: protocol.KindThinking, Signature: r.signature}
	case unitText:
		return protocol.Message{Kind: protocol.KindText, Text: u.text}
	case unitCall:
		return protocol.Message{Kind: protocol.KindToolCall, Call: r.calls[u.call]}
	}
	panic("scripted: unknown unit kind " + strconv.Itoa(int(u.kind)))
}

// cutIndex is how many units a failing attempt sends before it fails: about half,
// and never a tool call, since the formats differ in when a decoder reports a call.
func cutIndex(us []unit) int {
	n := len(us) / 2
	for i, u := range us[:n] {
		if u.kind == unitCall {
			return i
		}
	}
	return n
}

// chunks splits s into pieces of up to n runes.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i, runes := 0, 0
		for i < len(s) && runes < n {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			runes++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// pieceBytes is the approximate size of one tool-input fragment on the wire.
const pieceBytes = 20

// pieces splits a tool input into fragments of about pieceBytes, never inside a
// UTF-8 sequence.
func pieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(pieceBytes, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// lengthCache remembers the canonical lengths of JSON texts: a session sends the same
// tool schemas and earlier tool inputs with every request, and measuring them again
// each time would make the fake model's cost grow with the square of the session.
type lengthCache struct {
	mu sync.Mutex
	m  map[string]int
}

// maxCachedLengths bounds the cache; it starts over when full.
const maxCachedLengths = 16384

func (c *lengthCache) of(raw []byte, measure func([]byte) int) int {
	c.mu.Lock()
	n, ok := c.m[string(raw)]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = measure(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedLengths {
		c.m = make(map[string]int)
	}
	c.m[string(raw)] = n
	return n
}

package scripted_test

import (
	"encoding/json"
	"iter"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/scripted"
)

// collect drains a message sequence.
func collect(seq iter.Seq[protocol.Message]) []protocol.Message {
	var out []protocol.Message
	for m := range seq {
		out = append(out, m)
	}
	return out
}

// mustParse parses a script given inline.
func mustParse(t testing.TB, src string) *scripted.Script {
	t.Helper()
	s, err := scripted.ParseScript(t.Name(), []byte(src))
	require.NoError(t, err)
	return s
}

// assistantTurn is the turn an agent records for one complete response.
func assistantTurn(msgs []protocol.Message) protocol.Turn {
	t := protocol.Turn{Role: protocol.RoleAssistant}
	var thinking, text strings.Builder
	for _, m := range msgs {
		switch m.Kind {
		case protocol.KindThinking:
			if m.Signature != "" {
				t.Blocks = append(t.Blocks, protocol.Block{Type: protocol.BlockThinking, Text: thinking.String(), Signature: m.Signature})
				thinking.Reset()
			}
			thinking.WriteString(m.Text)
		case protocol.KindText:
			text.WriteString(m.Text)
		default:
			// other kinds carry nothing for the turn
		}
	}
	if text.Len() > 0 {
		t.Blocks = append(t.Blocks, protocol.Block{Type: protocol.BlockText, Text: text.String()})
	}
	for _, c := range calls(msgs) {
		t.Blocks = append(t.Blocks, protocol.Block{Type: protocol.BlockToolUse, ID: c.ID, Name: c.Name, Input: json.RawMessage(c.Input)})
	}
	return t
}

// calls returns the tool calls among msgs.
func calls(msgs []protocol.Message) []protocol.ToolCall {
	var out []protocol.ToolCall
	for _, m := range msgs {
		if m.Kind == protocol.KindToolCall {
			out = append(out, m.Call)
		}
	}
	return out
}

// results answers every tool call of msgs with answer(call).
func results(msgs []protocol.Message, answer func(protocol.ToolCall) string) protocol.Turn {
	t := protocol.Turn{Role: protocol.RoleUser}
	for _, c := range calls(msgs) {
		t.Blocks = append(t.Blocks, protocol.Block{Type: protocol.BlockToolResult, ToolUseID: c.ID, Content: answer(c)})
	}
	return t
}

// last returns the last message of msgs.
func last(msgs []protocol.Message) protocol.Message {
	if len(msgs) == 0 {
		return protocol.Message{}
	}
	return msgs[len(msgs)-1]
}

// textOf joins the text deltas of msgs.
func textOf(msgs []protocol.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		if m.Kind == protocol.KindText {
			b.WriteString(m.Text)
		}
	}
	return b.String()
}

func text(s string) protocol.Message { return protocol.Message{Kind: protocol.KindText, Text: s} }

func thinking(s string) protocol.Message {
	return protocol.Message{Kind: protocol.KindThinking, Text: s}
}

func usage(in, out int64) protocol.Message {
	return protocol.Message{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: in, Output: out}}
}

func stop(reason protocol.StopReason) protocol.Message {
	return protocol.Message{Kind: protocol.KindStop, Stop: reason}
}

func fail(kind protocol.ErrorKind) protocol.Message {
	return protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: kind}}
}

// kinds keeps only the kind of errors, whose messages tests do not pin.
func kinds(msgs []protocol.Message) []protocol.Message {
	out := make([]protocol.Message, len(msgs))
	for i, m := range msgs {
		if m.Kind == protocol.KindError {
			m.Err.Message = ""
		}
		out[i] = m
	}
	return out
}

func call(name, id, input string) protocol.Message {
	return protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: name, ID: id, Input: input}}
}

// toolUse and toolResult build conversation blocks by id.
func toolUse(id string) protocol.Block {
	return protocol.Block{Type: protocol.BlockToolUse, ID: id, Name: "T", Input: json.RawMessage(`{}`)}
}

func toolResult(id string) protocol.Block {
	return protocol.Block{Type: protocol.BlockToolResult, ToolUseID: id, Content: "ok"}
}

func turn(role protocol.Role, blocks ...protocol.Block) protocol.Turn {
	return protocol.Turn{Role: role, Blocks: blocks}
}

func user(s string) protocol.Turn { return protocol.UserText(s) }

func assistant(s string) protocol.Turn {
	return turn(protocol.RoleAssistant, protocol.Block{Type: protocol.BlockText, Text: s})
}

// quote is s as a JSON string, without HTML escaping.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func itoa(i int) string { return strconv.Itoa(i) }

package telemetry

import (
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/textcut"
)

// The content attributes (AGENTRUN_OTEL_CONTENT=1) are JSON in the shapes of the GenAI
// conventions' message schemas, masked like every artifact and bounded: a text longer
// than maxPart is cut, and the oldest messages of a history are left out until it fits
// in maxContent.
const (
	maxPart    = 16 << 10
	maxContent = 64 << 10
)

// content is a content attribute: raw JSON, masked inside its strings.
func (sc *scope) content(key string, raw []byte) attribute.KeyValue {
	return attribute.String(key, string(sc.redact.JSON(raw)))
}

// part is one message part of the conventions' schemas.
type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  *string         `json:"response,omitempty"`
}

// message is one chat message of the conventions' schemas.
type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// parts converts a turn's blocks; a user turn of tool results only is the tool's.
func parts(blocks []protocol.Block) (ps []part, toolOnly bool) {
	toolOnly = len(blocks) > 0
	for _, b := range blocks {
		switch b.Type {
		case protocol.BlockText:
			ps = append(ps, part{Type: "text", Content: clip(b.Text)})
		case protocol.BlockThinking:
			ps = append(ps, part{Type: "reasoning", Content: clip(b.Text)})
		case protocol.BlockToolUse:
			ps = append(ps, part{Type: "tool_call", ID: b.ID, Name: b.Name, Arguments: toolArguments(string(b.Input))})
		case protocol.BlockToolResult:
			r := clip(b.Content)
			ps = append(ps, part{Type: "tool_call_response", ID: b.ToolUseID, Response: &r})
			continue
		default:
			continue // redacted thinking is opaque
		}
		toolOnly = false
	}
	if ps == nil {
		ps = []part{}
	}
	return ps, toolOnly
}

// inputMessages is gen_ai.input.messages of a conversation window.
func inputMessages(turns []protocol.Turn) []byte {
	msgs := make([]message, 0, len(turns))
	for _, t := range turns {
		ps, toolOnly := parts(t.Blocks)
		role := t.Role.String()
		if t.Role == protocol.RoleUser && toolOnly {
			role = "tool"
		}
		msgs = append(msgs, message{Role: role, Parts: ps})
	}
	for {
		b := mustJSON(msgs)
		if len(b) <= maxContent || len(msgs) <= 1 {
			return b
		}
		msgs = msgs[max(1, len(msgs)/4):] // the oldest go first
	}
}

// outputMessages is gen_ai.output.messages of one assistant turn.
func outputMessages(blocks []protocol.Block, stop protocol.StopReason) []byte {
	ps, _ := parts(blocks)
	return mustJSON([]message{{Role: "assistant", Parts: ps, FinishReason: string(stop)}})
}

// systemInstructions is gen_ai.system_instructions.
func systemInstructions(system string) []byte {
	if system == "" {
		return []byte("[]")
	}
	return mustJSON([]part{{Type: "text", Content: clip(system)}})
}

// toolArguments is a tool call's input as JSON: the object the model sent, or the
// text it sent when that is not JSON.
func toolArguments(input string) json.RawMessage {
	if json.Valid([]byte(input)) && len(input) <= maxPart {
		return json.RawMessage(input)
	}
	return mustJSON(clip(input))
}

// clip cuts s to maxPart bytes at a character boundary.
func clip(s string) string { return textcut.Clip(s, maxPart, textcut.Ellipsis) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("telemetry: encode content: " + err.Error()) // plain structs and strings: cannot fail
	}
	return b
}

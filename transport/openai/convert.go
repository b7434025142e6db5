package openai

import (
	"fmt"
	"strings"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/openai/wire"
)

// ErrorPrefix starts the content of a tool message whose result is an error: Chat has
// no is_error flag, so the model learns it from the text.
const ErrorPrefix = "Error: "

// convertMessages turns the Claude-shaped conversation into Chat messages: the system
// prompt first, then each turn in order. A user turn becomes one tool message per
// tool_result block, in order, followed by one user message holding its text blocks;
// an assistant turn becomes one assistant message.
func convertMessages(system string, turns []protocol.Turn, echoReasoning bool) ([]chatMessage, error) {
	msgs := make([]chatMessage, 0, len(turns)+1)
	if system != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: &system})
	}
	for i, t := range turns {
		switch t.Role {
		case protocol.RoleUser:
			msgs = appendUser(msgs, t)
		case protocol.RoleAssistant:
			msgs = append(msgs, assistantMessage(t, echoReasoning))
		default:
			return nil, fmt.Errorf("encode chat request: turn %d: invalid role %d", i, t.Role)
		}
	}
	return msgs, nil
}

// appendUser appends the messages of one user turn. Tool messages come first because
// Chat requires them right after the assistant message that made the calls.
func appendUser(msgs []chatMessage, t protocol.Turn) []chatMessage {
	var texts []string
	for _, b := range t.Blocks {
		switch b.Type {
		case protocol.BlockToolResult:
			content := b.Content
			if b.IsError {
				content = ErrorPrefix + content
			}
			msgs = append(msgs, chatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: &content})
		case protocol.BlockText:
			texts = append(texts, b.Text)
		default:
			// A user turn holds text and tool results; Chat has no place for the rest.
		}
	}
	if len(texts) > 0 {
		text := strings.Join(texts, "\n")
		msgs = append(msgs, chatMessage{Role: "user", Content: &text})
	}
	return msgs
}

// assistantMessage converts one assistant turn. Text blocks are joined by newlines;
// content is null when the turn only calls tools. Thinking goes back as
// reasoning_content only when echo is set and the turn made tool calls.
func assistantMessage(t protocol.Turn, echo bool) chatMessage {
	var texts, thinking []string
	var calls []chatToolCall
	for _, b := range t.Blocks {
		switch b.Type {
		case protocol.BlockText:
			if b.Text != "" {
				texts = append(texts, b.Text)
			}
		case protocol.BlockThinking:
			if b.Text != "" {
				thinking = append(thinking, b.Text)
			}
		case protocol.BlockToolUse:
			calls = append(calls, chatToolCall{ID: b.ID, Type: "function",
				Function: chatFunction{Name: b.Name, Arguments: wire.Arguments(b.Input)}})
		default:
			// Redacted thinking is Anthropic's alone; a tool result is never the assistant's.
		}
	}
	m := chatMessage{Role: "assistant", ToolCalls: calls}
	if len(texts) > 0 || len(calls) == 0 {
		text := strings.Join(texts, "\n")
		m.Content = &text
	}
	if echo && len(calls) > 0 {
		m.ReasoningContent = strings.Join(thinking, "\n")
	}
	return m
}

// convertTools describes the tools as Chat function tools.
func convertTools(specs []protocol.ToolSpec) []chatTool {
	if len(specs) == 0 {
		return nil
	}
	tools := make([]chatTool, 0, len(specs))
	for _, s := range specs {
		tools = append(tools, chatTool{Type: "function",
			Function: chatToolSpec{Name: s.Name, Description: s.Description, Parameters: wire.Parameters(s.InputSchema)}})
	}
	return tools
}

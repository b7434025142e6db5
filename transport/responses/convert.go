package responses

import (
	"fmt"
	"strings"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/openai/wire"
)

// ErrorPrefix starts the output of a failed tool call: function_call_output has no
// error flag, so the model learns it from the text.
const ErrorPrefix = "Error: "

// convertInput turns the Claude-shaped conversation into input items. A user turn
// gives one function_call_output per tool_result, in order, then one user message with
// its text; an assistant turn gives one assistant message with its text, then one
// function_call per tool_use. Thinking is not sent back.
func convertInput(turns []protocol.Turn) ([]inputItem, error) {
	items := make([]inputItem, 0, len(turns))
	for i, t := range turns {
		var texts []string
		var calls []inputItem
		for _, b := range t.Blocks {
			switch b.Type {
			case protocol.BlockText:
				if b.Text != "" || t.Role == protocol.RoleUser {
					texts = append(texts, b.Text)
				}
			case protocol.BlockToolUse:
				if t.Role == protocol.RoleAssistant {
					calls = append(calls, inputItem{Type: "function_call", CallID: b.ID, Name: b.Name,
						Arguments: wire.Arguments(b.Input)})
				}
			case protocol.BlockToolResult:
				if t.Role == protocol.RoleUser {
					out := b.Content
					if b.IsError {
						out = ErrorPrefix + out
					}
					items = append(items, inputItem{Type: "function_call_output", CallID: b.ToolUseID, Output: &out})
				}
			default:
				// Thinking is not sent back: the Responses API keeps its own reasoning.
			}
		}
		var role string
		switch t.Role {
		case protocol.RoleUser:
			role = "user"
		case protocol.RoleAssistant:
			role = "assistant"
		default:
			return nil, fmt.Errorf("encode responses request: turn %d: invalid role %d", i, t.Role)
		}
		if len(texts) > 0 {
			text := strings.Join(texts, "\n")
			items = append(items, inputItem{Role: role, Content: &text})
		}
		items = append(items, calls...)
	}
	return items, nil
}

// convertTools describes the tools as Responses function tools.
func convertTools(specs []protocol.ToolSpec) []tool {
	if len(specs) == 0 {
		return nil
	}
	tools := make([]tool, 0, len(specs))
	for _, s := range specs {
		tools = append(tools, tool{Type: "function", Name: s.Name, Description: s.Description,
			Parameters: wire.Parameters(s.InputSchema)})
	}
	return tools
}

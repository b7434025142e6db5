package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// wireRequest is a wire request read back into the protocol shape.
type wireRequest struct {
	req          protocol.Request
	stream       bool
	includeUsage bool // Chat: stream_options.include_usage
}

// errorPrefix marks a failed tool result in the formats that have no is_error flag.
const errorPrefix = "Error: "

// parseRequest reads a request body of format f.
func parseRequest(f format, body []byte) (wireRequest, error) {
	var (
		wr  wireRequest
		err error
	)
	switch f {
	case formatAnthropic:
		wr, err = parseAnthropic(body)
	case formatChat:
		wr, err = parseChat(body)
	case formatResponses:
		wr, err = parseResponses(body)
	default:
		err = fmt.Errorf("unknown format %d", f)
	}
	if err != nil {
		return wireRequest{}, fmt.Errorf("decode request: %w", err)
	}
	return wr, nil
}

type anthropicRequest struct {
	Model    string              `json:"model"`
	System   json.RawMessage     `json:"system"`
	Messages []protocol.Turn     `json:"messages"`
	Tools    []protocol.ToolSpec `json:"tools"`
	Stream   bool                `json:"stream"`
}

func parseAnthropic(body []byte) (wireRequest, error) {
	var in anthropicRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return wireRequest{}, err
	}
	system, err := protocol.ResultContentText(in.System)
	if err != nil {
		return wireRequest{}, fmt.Errorf("system: %w", err)
	}
	return wireRequest{
		req:    protocol.Request{Model: in.Model, System: system, Messages: in.Messages, Tools: in.Tools},
		stream: in.Stream,
	}, nil
}

// turns builds a conversation, merging consecutive blocks of one role into one turn.
type turns []protocol.Turn

func (ts *turns) add(role protocol.Role, b protocol.Block) {
	if n := len(*ts); n > 0 && (*ts)[n-1].Role == role {
		(*ts)[n-1].Blocks = append((*ts)[n-1].Blocks, b)
		return
	}
	*ts = append(*ts, protocol.Turn{Role: role, Blocks: []protocol.Block{b}})
}

// toolResult reads a tool result back; a leading errorPrefix means it failed.
func toolResult(id, content string) protocol.Block {
	rest, isErr := strings.CutPrefix(content, errorPrefix)
	return protocol.Block{Type: protocol.BlockToolResult, ToolUseID: id, Content: rest, IsError: isErr}
}

// rawInput is a tool input given as a JSON string; empty means none.
func rawInput(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return nil
	}
	return json.RawMessage(args)
}

func addSystem(system *string, text string) {
	if *system != "" && text != "" {
		*system += "\n"
	}
	*system += text
}

type chatRequestIn struct {
	Model         string          `json:"model"`
	Messages      []chatMessageIn `json:"messages"`
	Tools         []chatToolIn    `json:"tools"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMessageIn struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

type chatToolIn struct {
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

func parseChat(body []byte) (wireRequest, error) {
	var in chatRequestIn
	if err := json.Unmarshal(body, &in); err != nil {
		return wireRequest{}, err
	}
	wr := wireRequest{stream: in.Stream, includeUsage: in.StreamOptions != nil && in.StreamOptions.IncludeUsage}
	wr.req.Model = in.Model
	var ts turns
	for i, m := range in.Messages {
		text, err := protocol.ResultContentText(m.Content)
		if err != nil {
			return wireRequest{}, fmt.Errorf("messages[%d]: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			addSystem(&wr.req.System, text)
		case "user":
			ts.add(protocol.RoleUser, protocol.Block{Type: protocol.BlockText, Text: text})
		case "tool":
			ts.add(protocol.RoleUser, toolResult(m.ToolCallID, text))
		case "assistant":
			start := len(ts)
			if r := m.ReasoningContent + m.Reasoning; r != "" {
				ts.add(protocol.RoleAssistant, protocol.Block{Type: protocol.BlockThinking, Text: r})
			}
			if text != "" {
				ts.add(protocol.RoleAssistant, protocol.Block{Type: protocol.BlockText, Text: text})
			}
			for _, c := range m.ToolCalls {
				ts.add(protocol.RoleAssistant, protocol.Block{Type: protocol.BlockToolUse, ID: c.ID,
					Name: c.Function.Name, Input: rawInput(c.Function.Arguments)})
			}
			if len(ts) == start { // an empty assistant message is still a turn
				ts = append(ts, protocol.Turn{Role: protocol.RoleAssistant})
			}
		default:
			return wireRequest{}, fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	wr.req.Messages = ts
	for _, t := range in.Tools {
		wr.req.Tools = append(wr.req.Tools, protocol.ToolSpec{Name: t.Function.Name,
			Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	return wr, nil
}

type responsesRequestIn struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Tools        []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"tools"`
	Stream bool `json:"stream"`
}

type responsesItemIn struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	// Arguments is the function_call input JSON as a string.
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
	EncryptedContent string `json:"encrypted_content"`
}

func parseResponses(body []byte) (wireRequest, error) {
	var in responsesRequestIn
	if err := json.Unmarshal(body, &in); err != nil {
		return wireRequest{}, err
	}
	wr := wireRequest{stream: in.Stream}
	wr.req.Model, wr.req.System = in.Model, in.Instructions
	for _, t := range in.Tools {
		wr.req.Tools = append(wr.req.Tools, protocol.ToolSpec{Name: t.Name, Description: t.Description, InputSchema: t.Parameters})
	}
	input := bytes.TrimSpace(in.Input)
	if len(input) > 0 && input[0] == '"' {
		var s string
		if err := json.Unmarshal(input, &s); err != nil {
			return wireRequest{}, fmt.Errorf("input: %w", err)
		}
		wr.req.Messages = []protocol.Turn{protocol.UserText(s)}
		return wr, nil
	}
	var items []responsesItemIn
	if len(input) > 0 {
		if err := json.Unmarshal(input, &items); err != nil {
			return wireRequest{}, fmt.Errorf("input: %w", err)
		}
	}
	var ts turns
	for i, it := range items {
		switch it.Type {
		case "message", "":
			text, err := protocol.ResultContentText(it.Content)
			if err != nil {
				return wireRequest{}, fmt.Errorf("input[%d]: %w", i, err)
			}
			switch it.Role {
			case "system", "developer":
				addSystem(&wr.req.System, text)
			case "user":
				ts.add(protocol.RoleUser, protocol.Block{Type: protocol.BlockText, Text: text})
			case "assistant":
				ts.add(protocol.RoleAssistant, protocol.Block{Type: protocol.BlockText, Text: text})
			default:
				return wireRequest{}, fmt.Errorf("input[%d]: unknown role %q", i, it.Role)
			}
		case "function_call":
			ts.add(protocol.RoleAssistant, protocol.Block{Type: protocol.BlockToolUse, ID: it.CallID, Name: it.Name,
				Input: rawInput(it.Arguments)})
		case "function_call_output":
			out, err := protocol.ResultContentText(it.Output)
			if err != nil {
				return wireRequest{}, fmt.Errorf("input[%d]: output: %w", i, err)
			}
			ts.add(protocol.RoleUser, toolResult(it.CallID, out))
		case "reasoning":
			texts := make([]string, len(it.Summary))
			for j, s := range it.Summary {
				texts[j] = s.Text
			}
			ts.add(protocol.RoleAssistant, protocol.Block{Type: protocol.BlockThinking,
				Text: strings.Join(texts, "\n"), Signature: it.EncryptedContent})
		default:
			return wireRequest{}, fmt.Errorf("input[%d]: unknown item type %q", i, it.Type)
		}
	}
	wr.req.Messages = ts
	return wr, nil
}

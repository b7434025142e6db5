package scripted

import (
	"encoding/json"

	"github.com/agentrun/agentrun/protocol"
)

// chatStream renders a response as an OpenAI Chat Completions stream (wire-formats
// B.4–B.8): a role chunk, content and reasoning_content deltas, tool calls by index,
// the finish_reason chunk, the usage chunk when asked for, and data: [DONE]. Chat has
// no thinking signatures, so the end of a thinking block sends nothing.
type chatStream struct {
	sw        *sseWriter
	r         *response
	model, id string
	created   int64
	usage     bool // stream_options.include_usage
}

type chatChunk struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *chatUsage   `json:"usage"`
}

type chatChoice struct {
	Index        int       `json:"index"`
	Delta        chatDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type chatDelta struct {
	Role string `json:"role,omitempty"`
	// Content is raw so that the role chunk can say "content": null.
	Content          json.RawMessage `json:"content,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []chatCallDelta `json:"tool_calls,omitempty"`
}

type chatCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	} `json:"prompt_tokens_details"`
}

// chatFinish maps a stop reason to a finish_reason.
func chatFinish(stop protocol.StopReason) string {
	switch stop {
	case protocol.StopToolUse:
		return "tool_calls"
	case protocol.StopMaxTokens, protocol.StopContextWindow:
		return "length"
	case protocol.StopRefusal:
		return "content_filter"
	case protocol.StopEndTurn, protocol.StopSequence, protocol.StopPauseTurn:
	}
	return "stop"
}

func (c *chatStream) chunk(d chatDelta, finish *string, tick bool) {
	c.send(chatChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
		Choices: []chatChoice{{Delta: d, FinishReason: finish}}}, tick)
}

func (c *chatStream) send(ch chatChunk, tick bool) {
	b, err := json.Marshal(ch)
	if err != nil {
		panic("scripted: marshal chunk: " + err.Error()) // typed structs always marshal
	}
	c.sw.send("", b, tick)
}

func (c *chatStream) begin() {
	content := json.RawMessage(`""`)
	if c.r.text == "" && c.r.thinking == "" && len(c.r.calls) > 0 {
		content = json.RawMessage(`null`)
	}
	c.chunk(chatDelta{Role: "assistant", Content: content}, nil, false)
}

func (c *chatStream) unit(u unit) {
	switch u.kind {
	case unitThinking:
		c.chunk(chatDelta{ReasoningContent: u.text}, nil, true)
	case unitSignature:
	case unitText:
		s, _ := json.Marshal(u.text) // a string always marshals
		c.chunk(chatDelta{Content: s}, nil, true)
	case unitCall:
		call := c.r.calls[u.call]
		first := chatCallDelta{Index: u.call, ID: call.ID, Type: "function"}
		first.Function.Name = call.Name
		c.chunk(chatDelta{ToolCalls: []chatCallDelta{first}}, nil, false)
		for _, p := range u.pieces {
			d := chatCallDelta{Index: u.call}
			d.Function.Arguments = p
			c.chunk(chatDelta{ToolCalls: []chatCallDelta{d}}, nil, true)
		}
	}
}

func (c *chatStream) end() {
	finish := chatFinish(c.r.stop)
	c.chunk(chatDelta{}, &finish, false)
	if c.usage {
		u := c.r.usage
		cu := &chatUsage{PromptTokens: u.Input + u.CacheRead + u.CacheCreation, CompletionTokens: u.Output}
		cu.TotalTokens = cu.PromptTokens + cu.CompletionTokens
		cu.PromptTokensDetails.CachedTokens = u.CacheRead
		cu.PromptTokensDetails.CacheWriteTokens = u.CacheCreation
		c.send(chatChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
			Choices: []chatChoice{}, Usage: cu}, false)
	}
	c.sw.send("", []byte("[DONE]"), false)
}

func (c *chatStream) errorEvent(typ string) {
	b, _ := json.Marshal(openaiErrorBody{Error: openaiErrorValue{Message: errorEventMessage(typ), Type: typ}}) // plain strings
	c.sw.send("", b, false)
}

func (c *chatStream) malformed() {
	c.sw.send("", []byte(`{"id":"`+c.id+`","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"unterminated`), false)
}

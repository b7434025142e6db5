package openai

import (
	"encoding/json"

	"github.com/agentrun/agentrun/transport/openai/wire"
)

// chatRequest is the body of POST /chat/completions.
type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	Tools               []chatTool     `json:"tools,omitempty"`
	ToolChoice          string         `json:"tool_choice,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	PromptCacheKey      string         `json:"prompt_cache_key,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage is one entry of messages. Content is a pointer because an assistant
// message that only calls tools carries "content": null.
type chatMessage struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

// chatFunction is a called function; Arguments is the input JSON as a string.
type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatToolSpec `json:"function"`
}

type chatToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// chunk is one "data:" payload of the stream. Unknown members (timings, obfuscation,
// provider, system_fingerprint, …) are ignored. Error is kept raw: it is an object or a
// plain string depending on the server.
type chunk struct {
	Object  string          `json:"object"`
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

// isError reports whether a chunk is an error payload rather than output.
func (c *chunk) isError() bool { return wire.Truthy(c.Error) || c.Object == "error" }

type choice struct {
	Index        int    `json:"index"`
	Delta        delta  `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

// delta carries new output. Reasoning arrives as reasoning_content (DeepSeek,
// llama.cpp, old vLLM) or reasoning (Ollama, new vLLM, OpenRouter).
type delta struct {
	Content          string          `json:"content"`
	Refusal          string          `json:"refusal"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
	FunctionCall     *functionDelta  `json:"function_call"`
}

// toolCallDelta is a fragment of one tool call. Index is a pointer because some
// servers leave it out.
type toolCallDelta struct {
	Index    *int          `json:"index"`
	ID       string        `json:"id"`
	Function functionDelta `json:"function"`
}

// functionDelta holds a name and an arguments fragment. Arguments is normally a JSON
// string; a server that sends the object itself is accepted too.
type functionDelta struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type usage struct {
	PromptTokens        int64         `json:"prompt_tokens"`
	CompletionTokens    int64         `json:"completion_tokens"`
	PromptTokensDetails *tokenDetails `json:"prompt_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's name for the cached part of PromptTokens.
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
}

type tokenDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

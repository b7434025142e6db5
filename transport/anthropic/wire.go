package anthropic

import "encoding/json"

// The request body of POST /v1/messages.
type wireRequest struct {
	Model        string            `json:"model"`
	MaxTokens    int               `json:"max_tokens"`
	Stream       bool              `json:"stream"`
	System       []wireSystemBlock `json:"system,omitempty"`
	Tools        []wireTool        `json:"tools,omitempty"`
	ToolChoice   *wireToolChoice   `json:"tool_choice,omitempty"`
	Messages     []json.RawMessage `json:"messages"`
	Thinking     *wireThinking     `json:"thinking,omitempty"`
	OutputConfig *wireOutputConfig `json:"output_config,omitempty"`
}

// wireToolChoice is the tool_choice member: {"type":"none"} forbids tool use.
type wireToolChoice struct {
	Type string `json:"type"`
}

// wireCacheControl marks a prompt-cache breakpoint.
type wireCacheControl struct {
	Type string `json:"type"`
}

func ephemeral() *wireCacheControl { return &wireCacheControl{Type: "ephemeral"} }

type wireSystemBlock struct {
	Type         string            `json:"type"`
	Text         string            `json:"text"`
	CacheControl *wireCacheControl `json:"cache_control,omitempty"`
}

type wireTool struct {
	Name         string            `json:"name"`
	Description  string            `json:"description,omitempty"`
	InputSchema  json.RawMessage   `json:"input_schema"`
	CacheControl *wireCacheControl `json:"cache_control,omitempty"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

type wireOutputConfig struct {
	Effort string `json:"effort,omitempty"`
}

// wireTurn is a message of the request as protocol.Turn marshals it; content is either
// a JSON string or an array of blocks.
type wireTurn struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// wireTurnBlocks is a message whose content is an array of blocks kept as raw JSON.
type wireTurnBlocks struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
}

// wireTextBlock is a text content block with an optional cache breakpoint.
type wireTextBlock struct {
	Type         string            `json:"type"`
	Text         string            `json:"text"`
	CacheControl *wireCacheControl `json:"cache_control,omitempty"`
}

// wireBlockType reads only the type of a content block.
type wireBlockType struct {
	Type string `json:"type"`
}

// wireEvent is the union of the streaming events' data objects. Only the members of
// its own type are set in any one event.
type wireEvent struct {
	Type string `json:"type"`
	// Index addresses a content block (content_block_start/delta/stop).
	Index int `json:"index"`
	// Message is the message_start payload.
	Message *wireMessage `json:"message"`
	// ContentBlock is the content_block_start payload.
	ContentBlock *wireBlock `json:"content_block"`
	// Delta is the content_block_delta or message_delta payload.
	Delta wireDelta `json:"delta"`
	// Usage is the message_delta usage.
	Usage *wireUsage `json:"usage"`
	// Error and RequestID are the error event payload.
	Error     *wireError `json:"error"`
	RequestID string     `json:"request_id"`
}

type wireMessage struct {
	ID    string    `json:"id"`
	Model string    `json:"model"`
	Usage wireUsage `json:"usage"`
}

// wireUsage holds token counts; a nil member was absent, which matters in
// message_delta, where only the members present replace earlier counts.
type wireUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

type wireBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	Data     string          `json:"data"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
}

// wireDelta is the union of content_block_delta deltas and the message_delta delta.
type wireDelta struct {
	Type        string  `json:"type"`
	Text        string  `json:"text"`
	Thinking    string  `json:"thinking"`
	PartialJSON string  `json:"partial_json"`
	Signature   string  `json:"signature"`
	StopReason  *string `json:"stop_reason"`
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// wireErrorBody is the body of every HTTP error response.
type wireErrorBody struct {
	Type      string    `json:"type"`
	Error     wireError `json:"error"`
	RequestID string    `json:"request_id"`
}

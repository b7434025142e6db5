package responses

import (
	"encoding/json"

	"github.com/agentrun/agentrun/transport/openai/wire"
)

// request is the body of POST /responses.
type request struct {
	Model           string      `json:"model"`
	Instructions    string      `json:"instructions,omitempty"`
	Input           []inputItem `json:"input"`
	Tools           []tool      `json:"tools,omitempty"`
	ToolChoice      string      `json:"tool_choice,omitempty"`
	MaxOutputTokens int         `json:"max_output_tokens,omitempty"`
	Reasoning       *reasoning  `json:"reasoning,omitempty"`
	PromptCacheKey  string      `json:"prompt_cache_key,omitempty"`
	Stream          bool        `json:"stream"`
}

type reasoning struct {
	Effort string `json:"effort"`
}

// inputItem is one input entry: a message ({"role","content"}), a function_call or a
// function_call_output. Content and Output are pointers so that an empty string is
// still sent.
type inputItem struct {
	Type      string  `json:"type,omitempty"`
	Role      string  `json:"role,omitempty"`
	Content   *string `json:"content,omitempty"`
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments string  `json:"arguments,omitempty"`
	Output    *string `json:"output,omitempty"`
}

// tool is a function tool. Strict is sent as false: the API's strict mode demands
// schemas (every property required, no extra properties) that agent tools do not
// follow.
type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// event holds the members of the events the decoder handles; unknown members are
// ignored. Type shadows the embedded ErrorObject's type, which no error event needs (a
// flat error event's type is "error").
type event struct {
	Type         string    `json:"type"`
	OutputIndex  *int      `json:"output_index"`
	ItemID       string    `json:"item_id"`
	SummaryIndex int       `json:"summary_index"`
	Delta        string    `json:"delta"`
	Name         string    `json:"name"`
	Arguments    *string   `json:"arguments"`
	Item         *item     `json:"item"`
	Response     *response `json:"response"`
	// The top-level error event has its members at the top, or nested in error.
	Error *wire.ErrorObject `json:"error"`
	wire.ErrorObject
}

// response holds the members of an event's response object the decoder reads.
type response struct {
	Usage             *usage             `json:"usage"`
	Error             *wire.ErrorObject  `json:"error"`
	IncompleteDetails *incompleteDetails `json:"incomplete_details"`
	MaxOutputTokens   int64              `json:"max_output_tokens"`
}

// atLimit reports whether a response said to be completed stopped at its output limit:
// incomplete_details says max_output_tokens, or the output used the whole limit.
func (r *response) atLimit() bool {
	if r == nil {
		return false
	}
	if r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "max_output_tokens" {
		return true
	}
	return r.MaxOutputTokens > 0 && r.Usage != nil && r.Usage.OutputTokens >= r.MaxOutputTokens
}

// item is an output item; only function_call items matter here.
type item struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	CallID    string  `json:"call_id"`
	Name      string  `json:"name"`
	Arguments *string `json:"arguments"`
}

type usage struct {
	InputTokens        int64         `json:"input_tokens"`
	OutputTokens       int64         `json:"output_tokens"`
	InputTokensDetails *tokenDetails `json:"input_tokens_details"`
	// CachedTokens is where some compatible servers put the cached count.
	CachedTokens int64 `json:"cached_tokens"`
}

type incompleteDetails struct {
	Reason string `json:"reason"`
}

type tokenDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

// Package openai speaks the OpenAI Chat Completions streaming format, and the dialects
// of the servers that imitate it (Ollama, vLLM, llama.cpp, OpenRouter, DeepSeek): it
// turns a Claude-shaped protocol.Request into a chat request and a chunk stream back
// into protocol messages.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/openai/wire"
)

// DefaultBaseURL is the OpenAI API root used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// The two names a server may expect for the output token limit.
const (
	MaxTokens           = "max_tokens"
	MaxCompletionTokens = "max_completion_tokens"
)

// Config describes one Chat Completions endpoint.
type Config struct {
	// BaseURL is the API root that "/chat/completions" is appended to; a trailing
	// slash is trimmed. Empty means DefaultBaseURL; a base of only a host means its "/v1".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" when it is not empty, so keyless
	// local servers work.
	APIKey string
	// Headers are added to every request (OpenAI-Organization, HTTP-Referer, …).
	Headers map[string]string
	// MaxTokensField names the output limit field, MaxTokens or MaxCompletionTokens.
	// Empty means MaxCompletionTokens for api.openai.com and MaxTokens elsewhere,
	// since Ollama and most local servers ignore the newer name.
	MaxTokensField string
	// EchoReasoning sends the thinking of assistant turns that made tool calls back
	// as reasoning_content, which DeepSeek's thinking mode requires.
	EchoReasoning bool
}

// Dialect is the Chat Completions wire format of one endpoint. It implements
// transport.Dialect and is safe for concurrent use.
type Dialect struct {
	endpoint string
	cfg      Config
	// noCacheKey is set once the server refused prompt_cache_key.
	noCacheKey atomic.Bool
}

var _ transport.Dialect = (*Dialect)(nil)

// New returns the dialect for cfg, with its defaults filled in.
func New(cfg Config) *Dialect {
	cfg.BaseURL = transport.APIRoot(cfg.BaseURL, DefaultBaseURL)
	if cfg.MaxTokensField == "" {
		cfg.MaxTokensField = MaxTokens
		if u, err := url.Parse(cfg.BaseURL); err == nil && strings.EqualFold(u.Hostname(), "api.openai.com") {
			cfg.MaxTokensField = MaxCompletionTokens
		}
	}
	return &Dialect{endpoint: cfg.BaseURL + "/chat/completions", cfg: cfg}
}

// NewRequest builds the streaming POST {base}/chat/completions request for req.
func (d *Dialect) NewRequest(ctx context.Context, req protocol.Request) (*http.Request, error) {
	body, err := d.body(req)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, d.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("new chat request: %w", err)
	}
	wire.SetHeaders(hreq.Header, d.cfg.APIKey, d.cfg.Headers)
	return hreq, nil
}

// body encodes the chat request for req.
func (d *Dialect) body(req protocol.Request) ([]byte, error) {
	msgs, err := convertMessages(req.SystemPrompt(), req.Messages, d.cfg.EchoReasoning)
	if err != nil {
		return nil, err
	}
	cr := chatRequest{
		Model:         req.Model,
		Messages:      msgs,
		Tools:         convertTools(req.Tools),
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
	}
	if req.ToolChoice == protocol.ToolChoiceNone && len(cr.Tools) > 0 {
		cr.ToolChoice = protocol.ToolChoiceNone
	}
	if !d.noCacheKey.Load() {
		cr.PromptCacheKey = wire.PromptCacheKey(req.PrefixDigest())
	}
	if req.MaxTokens > 0 {
		switch d.cfg.MaxTokensField {
		case MaxTokens:
			cr.MaxTokens = req.MaxTokens
		case MaxCompletionTokens:
			cr.MaxCompletionTokens = req.MaxTokens
		default:
			return nil, fmt.Errorf("encode chat request: unknown max tokens field %q", d.cfg.MaxTokensField)
		}
	}
	if req.Thinking.Mode == "enabled" || req.Thinking.Mode == "adaptive" {
		cr.ReasoningEffort = req.Thinking.Effort
		if cr.ReasoningEffort == "" {
			cr.ReasoningEffort = "high"
		}
	}
	b, err := json.Marshal(cr)
	if err != nil {
		return nil, fmt.Errorf("encode chat request: %w", err)
	}
	return b, nil
}

// NewDecoder returns a decoder of one successful streaming response body.
func (d *Dialect) NewDecoder(body io.Reader) transport.Decoder { return NewDecoder(body) }

// Relax drops a member that a server refused as bad (HTTP 400) from a request
// (transport.Relaxer): prompt_cache_key when the error names it, for this request and
// every later one of the dialect; else reasoning_effort, which many OpenAI-compatible
// servers (Ollama, llama.cpp, older vLLM) reject outright. The answer without them is
// worth more than none.
func (d *Dialect) Relax(req protocol.Request, te *transport.Error) (protocol.Request, string, bool) {
	if te.Status != http.StatusBadRequest {
		return req, "", false
	}
	if strings.Contains(te.Message, "prompt_cache_key") && !d.noCacheKey.Load() && wire.PromptCacheKey(req.PrefixDigest()) != "" {
		d.noCacheKey.Store(true)
		return req, "prompt_cache_key", true
	}
	if req.Thinking.Mode != "enabled" && req.Thinking.Mode != "adaptive" {
		return req, "", false
	}
	req.Thinking = protocol.Thinking{}
	return req, "reasoning_effort", true
}

// ErrorMessage extracts the message and the error type word from an error body in any
// of the shapes compatible servers use: {"error":{"message","type","code"}},
// {"error":"text"}, vLLM's flat {"object":"error","message",…} and FastAPI's
// {"detail":"text"}. It returns "" for a body of no known shape.
func (d *Dialect) ErrorMessage(body []byte) (msg, typ string) {
	e, _ := wire.ParseErrorOrDetail(body) // no known shape: the zero APIError, so ""
	return e.Message, e.TypeOrCode()
}

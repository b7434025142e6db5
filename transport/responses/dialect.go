// Package responses speaks the OpenAI Responses API streaming format: it turns a
// Claude-shaped protocol.Request into a /responses request and the typed event stream
// back into protocol messages.
package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/openai/wire"
)

// DefaultBaseURL is the OpenAI API root used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config describes one Responses API endpoint.
type Config struct {
	// BaseURL is the API root that "/responses" is appended to; a trailing slash is
	// trimmed. Empty means DefaultBaseURL; a base of only a host means its "/v1".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" when it is not empty.
	APIKey string
	// Headers are added to every request.
	Headers map[string]string
}

// Dialect is the Responses API wire format of one endpoint. It implements
// transport.Dialect and is safe for concurrent use.
type Dialect struct {
	endpoint string
	cfg      Config
}

var _ transport.Dialect = (*Dialect)(nil)

// New returns the dialect for cfg, with its defaults filled in.
func New(cfg Config) *Dialect {
	cfg.BaseURL = transport.APIRoot(cfg.BaseURL, DefaultBaseURL)
	return &Dialect{endpoint: cfg.BaseURL + "/responses", cfg: cfg}
}

// NewRequest builds the streaming POST {base}/responses request for req.
func (d *Dialect) NewRequest(ctx context.Context, req protocol.Request) (*http.Request, error) {
	input, err := convertInput(req.Messages)
	if err != nil {
		return nil, err
	}
	r := request{
		Model:           req.Model,
		Instructions:    req.SystemPrompt(),
		Input:           input,
		Tools:           convertTools(req.Tools),
		MaxOutputTokens: req.MaxTokens,
		Stream:          true,
		PromptCacheKey:  wire.PromptCacheKey(req.PrefixDigest()),
	}
	if req.ToolChoice == protocol.ToolChoiceNone && len(r.Tools) > 0 {
		r.ToolChoice = protocol.ToolChoiceNone
	}
	if req.Thinking.Mode == "enabled" || req.Thinking.Mode == "adaptive" {
		r.Reasoning = &reasoning{Effort: req.Thinking.Effort}
		if r.Reasoning.Effort == "" {
			r.Reasoning.Effort = "high"
		}
	}
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode responses request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, d.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("new responses request: %w", err)
	}
	wire.SetHeaders(hreq.Header, d.cfg.APIKey, d.cfg.Headers)
	return hreq, nil
}

// NewDecoder returns a decoder of one successful streaming response body.
func (d *Dialect) NewDecoder(body io.Reader) transport.Decoder { return NewDecoder(body) }

// ErrorMessage extracts the message and the error type word (type, else code) from an
// error body: {"error":{"message","type","code"}}, {"error":"text"} or the flat
// {"message","type","code"}. It returns "" for a body of no known shape.
func (d *Dialect) ErrorMessage(body []byte) (msg, typ string) {
	e, _ := wire.ParseError(body) // no known shape: the zero APIError, so ""
	return e.Message, e.TypeOrCode()
}

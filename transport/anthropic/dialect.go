// Package anthropic speaks the Anthropic Messages API: it turns a protocol.Request into
// a streaming POST /v1/messages request and the SSE response into protocol messages.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
)

// The defaults of Config.
const (
	DefaultBaseURL = "https://api.anthropic.com/v1"
	DefaultVersion = "2023-06-01"
)

// Config describes one Anthropic endpoint. Zero values take the defaults in brackets.
type Config struct {
	// BaseURL is the API root; requests go to BaseURL + "/messages" [DefaultBaseURL].
	// A base of only a host ("http://localhost:11434") means its "/v1".
	BaseURL string
	// APIKey is sent as x-api-key; an empty key sends no such header (keyless local
	// servers, or an Authorization header given in Headers).
	APIKey string
	// Version is the anthropic-version header [DefaultVersion].
	Version string
	// Beta lists beta names sent comma-separated as anthropic-beta.
	Beta []string
	// Headers are extra request headers, set after the dialect's own and so able to
	// replace them.
	Headers map[string]string
}

// Dialect is the Anthropic Messages wire format; it implements transport.Dialect and
// is safe for concurrent use.
type Dialect struct {
	url    string
	header http.Header
}

// New returns the dialect of the endpoint cfg describes.
func New(cfg Config) *Dialect {
	base := transport.APIRoot(cfg.BaseURL, DefaultBaseURL)
	version := cfg.Version
	if version == "" {
		version = DefaultVersion
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	h.Set("User-Agent", "agentrun")
	h.Set("Anthropic-Version", version)
	if cfg.APIKey != "" {
		h.Set("X-Api-Key", cfg.APIKey)
	}
	if len(cfg.Beta) > 0 {
		h.Set("Anthropic-Beta", strings.Join(cfg.Beta, ","))
	}
	for k, v := range cfg.Headers {
		h.Set(k, v)
	}
	return &Dialect{url: base + "/messages", header: h}
}

// NewRequest builds the streaming POST {BaseURL}/messages request for req.
func (d *Dialect) NewRequest(ctx context.Context, req protocol.Request) (*http.Request, error) {
	body, err := requestBody(req)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("new request: %w", err)
	}
	hreq.Header = d.header.Clone()
	return hreq, nil
}

// NewDecoder returns a decoder of one streaming response body.
func (d *Dialect) NewDecoder(body io.Reader) transport.Decoder { return NewDecoder(body) }

// ErrorMessage reads an error body {"type":"error","error":{"type","message"},
// "request_id"}. msg is "type: message (request_id …)"; both results are "" when the
// body has another shape.
func (d *Dialect) ErrorMessage(body []byte) (msg, typ string) {
	var w wireErrorBody
	if err := json.Unmarshal(body, &w); err != nil {
		return "", ""
	}
	return errorText(w.Error, w.RequestID), w.Error.Type
}

// errorText renders an API error for people; "" when e is empty.
func errorText(e wireError, requestID string) string {
	var msg string
	switch {
	case e.Type != "" && e.Message != "":
		msg = e.Type + ": " + e.Message
	case e.Type != "":
		msg = e.Type
	case e.Message != "":
		msg = e.Message
	default:
		return ""
	}
	if requestID != "" {
		msg += " (request_id " + requestID + ")"
	}
	return msg
}

// requestBody renders the JSON body of req. Prompt-cache breakpoints go on the system
// block (not on the tail block after it), the last tool and the last cacheable block of
// the last message: three of the four the API allows.
func requestBody(req protocol.Request) ([]byte, error) {
	w := wireRequest{Model: req.Model, MaxTokens: req.MaxTokens, Stream: true}
	if req.System != "" {
		w.System = []wireSystemBlock{{Type: "text", Text: req.System, CacheControl: ephemeral()}}
	}
	if req.SystemTail != "" { // after the breakpoint: it differs between sessions
		w.System = append(w.System, wireSystemBlock{Type: "text", Text: req.SystemTail})
	}
	for _, t := range req.Tools {
		schema := t.InputSchema
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if req.ToolChoice == protocol.ToolChoiceNone && len(w.Tools) > 0 {
		w.ToolChoice = &wireToolChoice{Type: "none"}
	}
	if n := len(w.Tools); n > 0 {
		w.Tools[n-1].CacheControl = ephemeral()
	}
	var err error
	if w.Thinking, w.OutputConfig, err = thinking(req.Thinking); err != nil {
		return nil, err
	}
	if w.Messages, err = messages(req.Messages); err != nil {
		return nil, err
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return body, nil
}

// thinking maps the thinking settings: no thinking member when Mode is "".
func thinking(t protocol.Thinking) (*wireThinking, *wireOutputConfig, error) {
	switch t.Mode {
	case "":
		return nil, nil, nil
	case "disabled":
		return &wireThinking{Type: "disabled"}, nil, nil
	case "enabled":
		budget := t.Budget
		if budget <= 0 {
			budget = minThinkingBudget
		}
		return &wireThinking{Type: "enabled", BudgetTokens: budget}, nil, nil
	case "adaptive":
		var oc *wireOutputConfig
		if t.Effort != "" {
			oc = &wireOutputConfig{Effort: t.Effort}
		}
		return &wireThinking{Type: "adaptive"}, oc, nil
	}
	return nil, nil, fmt.Errorf("encode request: unknown thinking mode %q", t.Mode)
}

// minThinkingBudget is the smallest budget the API accepts, used when Mode is
// "enabled" and no budget is given.
const minThinkingBudget = 1024

// messages renders the conversation in protocol.Turn's Claude JSON. Empty text blocks
// are left out (the API rejects them), as are thinking blocks without a signature
// (reasoning from another provider, which the API would reject as modified), and so is
// a turn left with no blocks: the API
// joins consecutive turns of one role. The last block that can carry a cache
// breakpoint in the last turn gets one.
func messages(turns []protocol.Turn) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(turns))
	for _, t := range turns {
		t = withoutEmptyText(t)
		if len(t.Blocks) == 0 {
			continue
		}
		b, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		out = append(out, b)
	}
	if n := len(out); n > 0 {
		last, err := withBreakpoint(out[n-1])
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		out[n-1] = last
	}
	return out, nil
}

func withoutEmptyText(t protocol.Turn) protocol.Turn { // and unsigned thinking
	keep := t.Blocks[:0:0]
	for _, b := range t.Blocks {
		if b.Type == protocol.BlockText && b.Text == "" || b.Type == protocol.BlockThinking && b.Signature == "" {
			continue
		}
		keep = append(keep, b)
	}
	t.Blocks = keep
	return t
}

// withBreakpoint adds cache_control to the last block of a marshalled turn that may
// carry one (thinking blocks may not), turning string content into a text block.
func withBreakpoint(turn json.RawMessage) (json.RawMessage, error) {
	var t wireTurn
	if err := json.Unmarshal(turn, &t); err != nil {
		return nil, err
	}
	var blocks []json.RawMessage
	if c := bytes.TrimSpace(t.Content); len(c) > 0 && c[0] == '"' {
		var text string
		if err := json.Unmarshal(c, &text); err != nil {
			return nil, err
		}
		b, err := json.Marshal(wireTextBlock{Type: "text", Text: text, CacheControl: ephemeral()})
		if err != nil {
			return nil, err
		}
		blocks = []json.RawMessage{b}
	} else {
		if err := json.Unmarshal(c, &blocks); err != nil {
			return nil, err
		}
		for i := len(blocks) - 1; i >= 0; i-- {
			var bt wireBlockType
			if err := json.Unmarshal(blocks[i], &bt); err != nil {
				return nil, err
			}
			if bt.Type == "thinking" || bt.Type == "redacted_thinking" {
				continue
			}
			blocks[i] = addMember(blocks[i], `"cache_control":{"type":"ephemeral"}`)
			break
		}
	}
	return json.Marshal(wireTurnBlocks{Role: t.Role, Content: blocks})
}

// addMember appends one member to a marshalled, non-empty JSON object.
func addMember(obj json.RawMessage, member string) json.RawMessage {
	obj = bytes.TrimSpace(obj)
	out := make([]byte, 0, len(obj)+len(member)+1)
	out = append(out, obj[:len(obj)-1]...)
	out = append(out, ',')
	out = append(out, member...)
	return append(out, '}')
}

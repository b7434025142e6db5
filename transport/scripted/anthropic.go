package scripted

import (
	"encoding/json"
	"strconv"
)

// anthropicStream renders a response as an Anthropic Messages stream (wire-formats
// A.4–A.7): message_start, ping, content blocks, message_delta, message_stop.
type anthropicStream struct {
	sw        *sseWriter
	r         *response
	model, id string
	index     int      // index of the next content block
	open      unitKind // the kind of the open text or thinking block, 0 for none
}

type antMessageStart struct {
	Type    string     `json:"type"`
	Message antMessage `json:"message"`
}

type antMessage struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"`
	Role         string     `json:"role"`
	Model        string     `json:"model"`
	Content      []struct{} `json:"content"`
	StopReason   *string    `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        antUsage   `json:"usage"`
}

type antUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

type antBlockStart struct {
	Type         string   `json:"type"`
	Index        int      `json:"index"`
	ContentBlock antBlock `json:"content_block"`
}

// antBlock is a content block as announced by content_block_start.
type antBlock struct {
	Type      string           `json:"type"`
	Text      *string          `json:"text,omitempty"`
	Thinking  *string          `json:"thinking,omitempty"`
	Signature *string          `json:"signature,omitempty"`
	ID        string           `json:"id,omitempty"`
	Name      string           `json:"name,omitempty"`
	Input     *json.RawMessage `json:"input,omitempty"`
}

type antBlockDelta struct {
	Type  string   `json:"type"`
	Index int      `json:"index"`
	Delta antDelta `json:"delta"`
}

type antDelta struct {
	Type        string  `json:"type"`
	Text        *string `json:"text,omitempty"`
	Thinking    *string `json:"thinking,omitempty"`
	Signature   *string `json:"signature,omitempty"`
	PartialJSON *string `json:"partial_json,omitempty"`
}

type antBlockStop struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

type antMessageDelta struct {
	Type  string `json:"type"`
	Delta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage antUsage `json:"usage"`
}

func (a *anthropicStream) send(name string, v any, tick bool) {
	b, err := json.Marshal(v)
	if err != nil {
		panic("scripted: marshal " + name + ": " + err.Error()) // typed structs always marshal
	}
	a.sw.send(name, b, tick)
}

func (a *anthropicStream) usage(output int64) antUsage {
	u := a.r.usage
	return antUsage{InputTokens: u.Input, CacheCreationInputTokens: u.CacheCreation, CacheReadInputTokens: u.CacheRead, OutputTokens: output}
}

func (a *anthropicStream) begin() {
	a.send("message_start", antMessageStart{Type: "message_start", Message: antMessage{
		ID: a.id, Type: "message", Role: "assistant", Model: a.model, Content: []struct{}{},
		Usage: a.usage(min(a.r.usage.Output, 1)),
	}}, false)
	a.sw.send("ping", []byte(`{"type": "ping"}`), false)
}

func (a *anthropicStream) startBlock(b antBlock) {
	a.send("content_block_start", antBlockStart{Type: "content_block_start", Index: a.index, ContentBlock: b}, false)
}

func (a *anthropicStream) delta(d antDelta, tick bool) {
	a.send("content_block_delta", antBlockDelta{Type: "content_block_delta", Index: a.index, Delta: d}, tick)
}

func (a *anthropicStream) stopBlock() {
	a.send("content_block_stop", antBlockStop{Type: "content_block_stop", Index: a.index}, false)
	a.index++
	a.open = 0
}

func (a *anthropicStream) closeOpen() {
	if a.open != 0 {
		a.stopBlock()
	}
}

func (a *anthropicStream) unit(u unit) {
	empty := ""
	switch u.kind {
	case unitThinking:
		if a.open != unitThinking {
			a.closeOpen()
			a.startBlock(antBlock{Type: "thinking", Thinking: &empty, Signature: &empty})
			a.open = unitThinking
		}
		a.delta(antDelta{Type: "thinking_delta", Thinking: &u.text}, true)
	case unitSignature:
		a.delta(antDelta{Type: "signature_delta", Signature: &a.r.signature}, false)
		a.stopBlock()
	case unitText:
		if a.open != unitText {
			a.closeOpen()
			a.startBlock(antBlock{Type: "text", Text: &empty})
			a.open = unitText
		}
		a.delta(antDelta{Type: "text_delta", Text: &u.text}, true)
	case unitCall:
		a.closeOpen()
		c := a.r.calls[u.call]
		in := json.RawMessage("{}")
		a.startBlock(antBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: &in})
		a.delta(antDelta{Type: "input_json_delta", PartialJSON: &empty}, false)
		for _, p := range u.pieces {
			a.delta(antDelta{Type: "input_json_delta", PartialJSON: &p}, true)
		}
		a.stopBlock()
	}
}

func (a *anthropicStream) end() {
	a.closeOpen()
	md := antMessageDelta{Type: "message_delta", Usage: a.usage(a.r.usage.Output)}
	md.Delta.StopReason = string(a.r.stop)
	a.send("message_delta", md, false)
	a.sw.send("message_stop", []byte(`{"type":"message_stop"}`), false)
}

func (a *anthropicStream) errorEvent(typ string) {
	a.send("error", anthropicErrorBody{Type: "error", Error: anthropicErrorValue{Type: typ, Message: errorEventMessage(typ)}}, false)
}

func (a *anthropicStream) malformed() {
	a.sw.send("content_block_delta", []byte(`{"type":"content_block_delta","index":`+strconv.Itoa(a.index)+`,"delta":{"type":"text_delta","text":"unterminated`), false)
}

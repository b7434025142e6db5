package scripted

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// responsesStream renders a response as an OpenAI Responses stream (wire-formats C):
// response.created and response.in_progress, one output item per thinking block, text
// block and function call with their deltas and *.done events, then
// response.completed (or response.incomplete for max_tokens and refusal). The thinking
// block's signature travels as the reasoning item's encrypted_content.
type responsesStream struct {
	sw        *sseWriter
	r         *response
	model, id string
	created   int64
	seq       int

	output []respItem // finished output items
	open   *respItem  // the open reasoning or message item
	buf    strings.Builder
}

type respEvent struct {
	Type           string        `json:"type"`
	SequenceNumber int           `json:"sequence_number"`
	Response       *respResponse `json:"response,omitempty"`
	OutputIndex    *int          `json:"output_index,omitempty"`
	Item           *respItem     `json:"item,omitempty"`
	ItemID         string        `json:"item_id,omitempty"`
	ContentIndex   *int          `json:"content_index,omitempty"`
	SummaryIndex   *int          `json:"summary_index,omitempty"`
	Part           *respPart     `json:"part,omitempty"`
	Delta          *string       `json:"delta,omitempty"`
	Text           *string       `json:"text,omitempty"`
	Name           string        `json:"name,omitempty"`
	Arguments      *string       `json:"arguments,omitempty"`
	Code           string        `json:"code,omitempty"`
	Message        string        `json:"message,omitempty"`
}

type respResponse struct {
	ID                string     `json:"id"`
	Object            string     `json:"object"`
	CreatedAt         int64      `json:"created_at"`
	Status            string     `json:"status"`
	Model             string     `json:"model"`
	Output            []respItem `json:"output"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details,omitempty"`
	Usage *respUsage `json:"usage,omitempty"`
}

type respItem struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status,omitempty"`
	Role   string `json:"role,omitempty"`
	// Content is [] in a message item and Summary [] in a reasoning item from their
	// start, as the API sends them (SDKs index them); other items have neither.
	Content          []respPart `json:"content,omitzero"`
	Summary          []respPart `json:"summary,omitzero"`
	EncryptedContent string     `json:"encrypted_content,omitempty"`
	CallID           string     `json:"call_id,omitempty"`
	Name             string     `json:"name,omitempty"`
	Arguments        *string    `json:"arguments,omitempty"`
}

type respPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type respUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

func ptr[T any](v T) *T { return &v }

func (s *responsesStream) send(e respEvent, tick bool) {
	e.SequenceNumber = s.seq
	s.seq++
	b, err := json.Marshal(e)
	if err != nil {
		panic("scripted: marshal " + e.Type + ": " + err.Error()) // typed structs always marshal
	}
	s.sw.send(e.Type, b, tick)
}

func (s *responsesStream) response(status string) *respResponse {
	out := s.output
	if out == nil {
		out = []respItem{}
	}
	return &respResponse{ID: s.id, Object: "response", CreatedAt: s.created, Status: status, Model: s.model, Output: out}
}

func (s *responsesStream) begin() {
	s.send(respEvent{Type: "response.created", Response: s.response("in_progress")}, false)
	s.send(respEvent{Type: "response.in_progress", Response: s.response("in_progress")}, false)
}

// index is the output index of the open or next item.
func (s *responsesStream) index() *int { return ptr(len(s.output)) }

// itemID is the id of the open or next item, with prefix.
func (s *responsesStream) itemID(prefix string) string {
	return prefix + "_" + strings.TrimPrefix(s.id, "resp_") + "_" + strconv.Itoa(len(s.output))
}

func (s *responsesStream) unit(u unit) {
	switch u.kind {
	case unitThinking:
		if s.open == nil || s.open.Type != "reasoning" {
			s.closeOpen()
			s.open = &respItem{ID: s.itemID("rs"), Type: "reasoning", Summary: []respPart{}}
			s.send(respEvent{Type: "response.output_item.added", OutputIndex: s.index(), Item: s.open}, false)
			s.send(respEvent{Type: "response.reasoning_summary_part.added", ItemID: s.open.ID, OutputIndex: s.index(),
				SummaryIndex: ptr(0), Part: &respPart{Type: "summary_text"}}, false)
		}
		s.buf.WriteString(u.text)
		s.send(respEvent{Type: "response.reasoning_summary_text.delta", ItemID: s.open.ID, OutputIndex: s.index(),
			SummaryIndex: ptr(0), Delta: &u.text}, true)
	case unitSignature:
		text := s.buf.String()
		part := respPart{Type: "summary_text", Text: text}
		s.send(respEvent{Type: "response.reasoning_summary_text.done", ItemID: s.open.ID, OutputIndex: s.index(),
			SummaryIndex: ptr(0), Text: &text}, false)
		s.send(respEvent{Type: "response.reasoning_summary_part.done", ItemID: s.open.ID, OutputIndex: s.index(),
			SummaryIndex: ptr(0), Part: &part}, false)
		s.open.Summary = []respPart{part}
		s.open.EncryptedContent = s.r.signature
		s.finishItem()
	case unitText:
		if s.open == nil || s.open.Type != "message" {
			s.closeOpen()
			s.open = &respItem{ID: s.itemID("msg"), Type: "message", Status: "in_progress", Role: "assistant", Content: []respPart{}}
			s.send(respEvent{Type: "response.output_item.added", OutputIndex: s.index(), Item: s.open}, false)
			s.send(respEvent{Type: "response.content_part.added", ItemID: s.open.ID, OutputIndex: s.index(),
				ContentIndex: ptr(0), Part: &respPart{Type: "output_text"}}, false)
		}
		s.buf.WriteString(u.text)
		s.send(respEvent{Type: "response.output_text.delta", ItemID: s.open.ID, OutputIndex: s.index(),
			ContentIndex: ptr(0), Delta: &u.text}, true)
	case unitCall:
		s.closeOpen()
		c := s.r.calls[u.call]
		item := respItem{ID: "fc_" + strings.TrimPrefix(c.ID, "tc_"), Type: "function_call", Status: "in_progress",
			CallID: c.ID, Name: c.Name, Arguments: ptr("")}
		s.send(respEvent{Type: "response.output_item.added", OutputIndex: s.index(), Item: &item}, false)
		for _, p := range u.pieces {
			s.send(respEvent{Type: "response.function_call_arguments.delta", ItemID: item.ID, OutputIndex: s.index(),
				Delta: &p}, true)
		}
		s.send(respEvent{Type: "response.function_call_arguments.done", ItemID: item.ID, OutputIndex: s.index(),
			Name: c.Name, Arguments: &c.Input}, false)
		item.Status, item.Arguments = "completed", &c.Input
		s.open = &item
		s.finishItem()
	}
}

// closeOpen finishes an open message item. A reasoning item is always finished by
// its signature unit.
func (s *responsesStream) closeOpen() {
	if s.open == nil || s.open.Type != "message" {
		return
	}
	text := s.buf.String()
	part := respPart{Type: "output_text", Text: text}
	s.send(respEvent{Type: "response.output_text.done", ItemID: s.open.ID, OutputIndex: s.index(),
		ContentIndex: ptr(0), Text: &text}, false)
	s.send(respEvent{Type: "response.content_part.done", ItemID: s.open.ID, OutputIndex: s.index(),
		ContentIndex: ptr(0), Part: &part}, false)
	s.open.Status = "completed"
	s.open.Content = []respPart{part}
	s.finishItem()
}

// finishItem sends output_item.done for the open item and moves it to the output.
func (s *responsesStream) finishItem() {
	s.send(respEvent{Type: "response.output_item.done", OutputIndex: s.index(), Item: s.open}, false)
	s.output = append(s.output, *s.open)
	s.open = nil
	s.buf.Reset()
}

func (s *responsesStream) end() {
	s.closeOpen()
	typ, resp := "response.completed", s.response("completed")
	switch s.r.stop {
	case protocol.StopMaxTokens, protocol.StopContextWindow:
		typ, resp = "response.incomplete", s.response("incomplete")
		resp.IncompleteDetails = &struct {
			Reason string `json:"reason"`
		}{Reason: "max_output_tokens"}
	case protocol.StopRefusal:
		typ, resp = "response.incomplete", s.response("incomplete")
		resp.IncompleteDetails = &struct {
			Reason string `json:"reason"`
		}{Reason: "content_filter"}
	case protocol.StopEndTurn, protocol.StopToolUse, protocol.StopSequence, protocol.StopPauseTurn:
	}
	u := s.r.usage
	ru := &respUsage{InputTokens: u.Input + u.CacheRead + u.CacheCreation, OutputTokens: u.Output}
	ru.InputTokensDetails.CachedTokens = u.CacheRead
	ru.InputTokensDetails.CacheWriteTokens = u.CacheCreation
	ru.TotalTokens = ru.InputTokens + ru.OutputTokens
	resp.Usage = ru
	s.send(respEvent{Type: typ, Response: resp}, false)
}

func (s *responsesStream) errorEvent(typ string) {
	s.send(respEvent{Type: "error", Code: typ, Message: errorEventMessage(typ)}, false)
}

func (s *responsesStream) malformed() {
	s.sw.send("response.output_text.delta", []byte(`{"type":"response.output_text.delta","sequence_number":`+
		strconv.Itoa(s.seq)+`,"delta":"unterminated`), false)
}

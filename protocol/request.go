package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Request is one model call in the Claude shape every provider starts from. The
// transport converts it to its own wire format.
type Request struct {
	Model  string
	System string
	// SystemTail ends the system prompt after the cache breakpoint: what differs
	// between sessions that otherwise share a prefix (the workspace path, the
	// compaction summary). It is not part of PrefixDigest, so that a hundred sessions
	// of one job in their own workspace copies still share one cached prefix.
	SystemTail string
	Messages   []Turn
	Tools      []ToolSpec
	MaxTokens  int
	Thinking   Thinking
	// ToolChoice is "" (the model decides) or "none": the tools are offered, so the
	// request keeps the cached prefix and a conversation holding tool calls stays
	// valid, but the model must answer in text (the compaction summary).
	ToolChoice string
	// Limits bound what one response may hold; zero fields take the defaults.
	Limits Limits
	// Parent is the id of the Task call whose sub-agent makes this request, empty for
	// a top-level session (the parent_tool_use_id of the sub-agent's messages). The
	// HTTP transport sends it in the ParentHeader, so that a test double (the scripted
	// model) can tell a sub-agent's requests from its parent's.
	Parent string
}

// SystemPrompt is the whole system prompt, System then SystemTail, for the APIs that
// take it as one text.
func (r Request) SystemPrompt() string {
	switch {
	case r.SystemTail == "":
		return r.System
	case r.System == "":
		return r.SystemTail
	}
	return r.System + "\n" + r.SystemTail
}

// ParentHeader names the HTTP request header that carries Request.Parent.
const ParentHeader = "X-Agentrun-Parent"

// Limits bound one response in bytes, so that a runaway or hostile endpoint cannot
// make the process hold more than that. Zero fields take the defaults.
type Limits struct {
	// MaxResponseBytes bounds the text and thinking of one response together
	// [DefaultMaxResponseBytes].
	MaxResponseBytes int64
	// MaxToolInputBytes bounds the input of one tool call [DefaultMaxToolInputBytes].
	MaxToolInputBytes int64
}

// ToolChoiceNone forbids tool calls in the response (Request.ToolChoice).
const ToolChoiceNone = "none"

// The default Limits.
const (
	DefaultMaxResponseBytes  = 8 << 20
	DefaultMaxToolInputBytes = 4 << 20
)

// WithDefaults returns l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if l.MaxToolInputBytes <= 0 {
		l.MaxToolInputBytes = DefaultMaxToolInputBytes
	}
	return l
}

// Thinking configures extended thinking. The zero value leaves it to the provider.
type Thinking struct {
	// Mode is "", "disabled", "enabled" or "adaptive".
	Mode string
	// Budget is the thinking token budget for Mode "enabled".
	Budget int
	// Effort is "", "low", "medium", "high", "xhigh" or "max".
	Effort string
}

// ToolSpec describes one tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Role is who said a Turn.
type Role uint8

// The roles.
const (
	RoleUser Role = iota + 1
	RoleAssistant
)

func (r Role) String() string {
	switch r {
	case RoleUser:
		return "user"
	case RoleAssistant:
		return "assistant"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// BlockType says what a Block holds.
type BlockType uint8

// The content block types.
const (
	BlockText BlockType = iota + 1
	BlockThinking
	BlockRedactedThinking
	BlockToolUse
	BlockToolResult
)

// Turn is one message of the conversation.
type Turn struct {
	Role   Role
	Blocks []Block
}

// Block is one content block of a Turn. Which fields are set depends on Type.
type Block struct {
	Type BlockType
	// Text is the text of BlockText and the thinking text of BlockThinking.
	Text string
	// Signature belongs to BlockThinking; Data to BlockRedactedThinking.
	Signature string
	Data      string
	// ID, Name and Input describe BlockToolUse; Input is a JSON object.
	ID    string
	Name  string
	Input json.RawMessage
	// ToolUseID, Content and IsError describe BlockToolResult.
	ToolUseID string
	Content   string
	IsError   bool
}

// UserText returns a user turn holding one text block.
func UserText(text string) Turn {
	return Turn{Role: RoleUser, Blocks: []Block{{Type: BlockText, Text: text}}}
}

// IsUserText reports whether t is a real user message (text only, no tool results):
// the only place a conversation window may start.
func (t Turn) IsUserText() bool {
	if t.Role != RoleUser || len(t.Blocks) == 0 {
		return false
	}
	for _, b := range t.Blocks {
		if b.Type != BlockText {
			return false
		}
	}
	return true
}

// ToolUses returns the tool_use blocks of t in order.
func (t Turn) ToolUses() []Block {
	var out []Block
	for _, b := range t.Blocks {
		if b.Type == BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}

// wireBlock is the Claude JSON form of a Block.
type wireBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type wireTurn struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// MarshalJSON writes the Claude Messages form: {"role":..,"content":..}. A user turn with
// a single text block uses the string form of content.
func (t Turn) MarshalJSON() ([]byte, error) {
	if t.Role != RoleUser && t.Role != RoleAssistant {
		return nil, fmt.Errorf("marshal turn: invalid role %d", t.Role)
	}
	out := make([]byte, 0, 64)
	out = append(out, `{"role":"`...)
	out = append(out, t.Role.String()...)
	out = append(out, `","content":`...)
	if t.Role == RoleUser && len(t.Blocks) == 1 && t.Blocks[0].Type == BlockText {
		out = AppendJSONString(out, t.Blocks[0].Text)
		return append(out, '}'), nil
	}
	blocks := make([]wireBlock, 0, len(t.Blocks))
	for _, b := range t.Blocks {
		wb, err := toWire(b)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, wb)
	}
	content, err := json.Marshal(blocks)
	if err != nil {
		return nil, fmt.Errorf("marshal turn: %w", err)
	}
	out = append(out, content...)
	return append(out, '}'), nil
}

func toWire(b Block) (wireBlock, error) {
	switch b.Type {
	case BlockText:
		return wireBlock{Type: "text", Text: &b.Text}, nil
	case BlockThinking:
		return wireBlock{Type: "thinking", Thinking: &b.Text, Signature: &b.Signature}, nil
	case BlockRedactedThinking:
		return wireBlock{Type: "redacted_thinking", Data: b.Data}, nil
	case BlockToolUse:
		in := b.Input
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		return wireBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: in}, nil
	case BlockToolResult:
		c, err := json.Marshal(b.Content)
		if err != nil {
			return wireBlock{}, err
		}
		return wireBlock{Type: "tool_result", ToolUseID: b.ToolUseID, Content: c, IsError: b.IsError}, nil
	}
	return wireBlock{}, fmt.Errorf("marshal turn: invalid block type %d", b.Type)
}

// UnmarshalJSON reads the Claude Messages form written by MarshalJSON. Tool result
// content given as an array of text blocks is joined.
func (t *Turn) UnmarshalJSON(data []byte) error {
	var w wireTurn
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	switch w.Role {
	case "user":
		t.Role = RoleUser
	case "assistant":
		t.Role = RoleAssistant
	default:
		return fmt.Errorf("unmarshal turn: unknown role %q", w.Role)
	}
	t.Blocks = nil
	c := bytes.TrimSpace(w.Content)
	if len(c) > 0 && c[0] == '"' {
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return err
		}
		t.Blocks = []Block{{Type: BlockText, Text: s}}
		return nil
	}
	var blocks []wireBlock
	if err := json.Unmarshal(c, &blocks); err != nil {
		return fmt.Errorf("unmarshal turn: content: %w", err)
	}
	for _, wb := range blocks {
		b, err := fromWire(wb)
		if err != nil {
			return err
		}
		t.Blocks = append(t.Blocks, b)
	}
	return nil
}

func fromWire(wb wireBlock) (Block, error) {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	switch wb.Type {
	case "text":
		return Block{Type: BlockText, Text: str(wb.Text)}, nil
	case "thinking":
		return Block{Type: BlockThinking, Text: str(wb.Thinking), Signature: str(wb.Signature)}, nil
	case "redacted_thinking":
		return Block{Type: BlockRedactedThinking, Data: wb.Data}, nil
	case "tool_use":
		return Block{Type: BlockToolUse, ID: wb.ID, Name: wb.Name, Input: wb.Input}, nil
	case "tool_result":
		content, err := ResultContentText(wb.Content)
		if err != nil {
			return Block{}, err
		}
		return Block{Type: BlockToolResult, ToolUseID: wb.ToolUseID, Content: content, IsError: wb.IsError}, nil
	}
	return Block{}, fmt.Errorf("unmarshal turn: unknown block type %q", wb.Type)
}

// ResultContentText returns tool_result content as text: a JSON string as is, an array
// of text blocks joined by newlines.
func ResultContentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("tool_result content is neither a string nor an array of blocks")
	}
	var buf bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			buf.WriteByte('\n')
		}
		buf.WriteString(p.Text)
	}
	return buf.String(), nil
}

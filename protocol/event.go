package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Envelope holds what a writer adds around an event: Seq and TS in events.jsonl,
// SessionID and JobID on the run's multiplexed stream-json output. Zero fields are
// left out.
type Envelope struct {
	Seq       int64
	TS        time.Time
	SessionID string
	JobID     string
}

// TimeFormat is the layout of every timestamp in events: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// AppendEvent appends m as one JSON object (no newline) to dst. "type" is always the
// first key; then come the envelope fields, then the kind's own fields. The output is
// valid JSON and valid UTF-8 whatever bytes the message holds.
func AppendEvent(dst []byte, m Message, env Envelope) ([]byte, error) {
	if !m.Kind.Valid() {
		return dst, fmt.Errorf("encode event: invalid kind %d", m.Kind)
	}
	o := jsonObject{buf: dst, first: true}
	o.buf = append(o.buf, '{')
	o.str("type", m.Kind.EventType())
	if env.Seq != 0 {
		o.int("seq", env.Seq)
	}
	if !env.TS.IsZero() && m.Kind != KindSessionStart {
		o.key("ts")
		o.buf = appendTime(o.buf, env.TS)
	}
	if m.Kind != KindSessionStart && m.Kind != KindResult {
		o.strOpt("session_id", env.SessionID)
		o.strOpt("job_id", env.JobID)
	}
	switch m.Kind {
	case KindText:
		o.str("content", m.Text)
	case KindThinking:
		o.str("content", m.Text)
		o.strOpt("signature", m.Signature)
		o.strOpt("redacted", m.Redacted)
	case KindToolCall:
		o.str("name", m.Call.Name)
		o.str("id", m.Call.ID)
		o.key("input")
		o.buf = appendInput(o.buf, m.Call.Input)
		o.strOpt("server", m.Call.Server)
	case KindToolResult:
		o.str("tool_use_id", m.Result.ToolUseID)
		o.str("name", m.Result.Name)
		o.str("content", m.Result.Content)
		o.bool("is_error", m.Result.IsError)
		o.strOpt("server", m.Result.Server)
	case KindUsage:
		o.int("input_tokens", m.Usage.Input)
		o.int("output_tokens", m.Usage.Output)
		o.int("cache_read_input_tokens", m.Usage.CacheRead)
		o.int("cache_creation_input_tokens", m.Usage.CacheCreation)
		kind := m.UsageKind
		if kind == "" {
			kind = "agent"
		}
		o.str("kind", kind)
		o.strOpt("sub_session_id", m.SubSession)
	case KindStop:
		o.str("reason", string(m.Stop))
	case KindContextUpdate:
		o.str("kind", m.Context.Kind)
		o.str("trigger", m.Context.Trigger)
	case KindError:
		o.str("kind", string(m.Err.Kind))
		o.str("message", m.Err.Message)
	case KindRetry:
		o.int("attempt", int64(m.Attempt))
		o.int("delay_ms", m.DelayMS)
		o.str("reason", m.Reason)
	case KindSubAgentStart:
		s := subOrZero(m.Sub)
		o.str("sub_session_id", s.SessionID)
		o.str("timestamp", s.Timestamp)
		o.str("description", s.Description)
		o.str("prompt", s.Prompt)
	case KindSubAgentResult:
		s := subOrZero(m.Sub)
		o.str("sub_session_id", s.SessionID)
		o.str("status", s.Status)
		o.int("input_tokens", s.Usage.Input)
		o.int("output_tokens", s.Usage.Output)
		o.int("cache_read_input_tokens", s.Usage.CacheRead)
		o.int("cache_creation_input_tokens", s.Usage.CacheCreation)
		o.str("thinking", s.Thinking)
		o.str("text", s.Text)
		o.strOpt("description", s.Description)
		o.strOpt("prompt", s.Prompt)
		o.strOpt("timestamp", s.Timestamp)
	case KindSandboxViolation:
		v := violationOrZero(m.Violation)
		o.str("kind", v.Kind)
		o.str("target", v.Target)
	case KindMCPStatus:
		appendMCPMembers(&o, mcpOrZero(m.MCP), "server")
	case KindSubAgentEnd:
		s := subOrZero(m.Sub)
		o.str("sub_session_id", s.SessionID)
		o.str("timestamp", s.Timestamp)
		o.str("status", s.Status)
	case KindSessionStart:
		s := sessionOrZero(m.Session)
		o.int("schema_version", SchemaVersion)
		o.str("session_id", s.SessionID)
		o.str("job_id", s.JobID)
		appendProvenance(&o, s.Provenance)
		o.str("cwd", s.Cwd)
		tools := s.Tools
		if tools == nil {
			tools = []string{}
		}
		o.strings("tools", tools)
		ts := s.TS
		if ts == "" && !env.TS.IsZero() {
			ts = env.TS.UTC().Format(TimeFormat)
		}
		o.str("ts", ts)
		appendSandbox(&o, s.Sandbox)
		appendMCPList(&o, s.MCPServers)
	case KindResult:
		appendResult(&o, resultOrZero(m.Final))
	}
	if m.Parent != "" {
		o.str("parent_tool_use_id", m.Parent)
	}
	return append(o.buf, '}'), nil
}

// ErrNotEvent means a line is not a JSON event object of a known type.
var ErrNotEvent = errors.New("not an event")

// wireEvent is the union of every event's fields, for decoding.
type wireEvent struct {
	Type      string            `json:"type"`
	Seq       int64             `json:"seq"`
	TS        string            `json:"ts"`
	SessionID string            `json:"session_id"`
	JobID     string            `json:"job_id"`
	Parent    string            `json:"parent_tool_use_id"`
	Content   string            `json:"content"`
	Signature string            `json:"signature"`
	Redacted  string            `json:"redacted"`
	Name      string            `json:"name"`
	ID        string            `json:"id"`
	Input     json.RawMessage   `json:"input"`
	ToolUseID string            `json:"tool_use_id"`
	IsError   bool              `json:"is_error"`
	In        int64             `json:"input_tokens"`
	Out       int64             `json:"output_tokens"`
	CacheRead int64             `json:"cache_read_input_tokens"`
	CacheNew  int64             `json:"cache_creation_input_tokens"`
	Kind      string            `json:"kind"`
	SubID     string            `json:"sub_session_id"`
	Reason    string            `json:"reason"`
	Attempt   int               `json:"attempt"`
	DelayMS   int64             `json:"delay_ms"`
	Message   string            `json:"message"`
	Trigger   string            `json:"trigger"`
	Timestamp string            `json:"timestamp"`
	Desc      string            `json:"description"`
	Prompt    string            `json:"prompt"`
	Status    string            `json:"status"`
	Thinking  string            `json:"thinking"`
	Text      string            `json:"text"`
	Provider  string            `json:"provider"`
	Model     string            `json:"model"`
	Matrix    map[string]string `json:"matrix"`
	Repeat    int               `json:"repeat"`
	Version   string            `json:"agentrun_version"`
	Cwd       string            `json:"cwd"`
	Tools     []string          `json:"tools"`
	Sandbox   *Sandbox          `json:"sandbox"`
	Target    string            `json:"target"`
	Server    string            `json:"server"`
	Transport string            `json:"transport"`
	ToolCount int               `json:"tool_count"`
	Required  bool              `json:"required"`
	Restarts  int               `json:"restarts"`
	MCP       []MCPServer       `json:"mcp_servers"`
}

// ParseEvent decodes one event line written by AppendEvent. Unknown fields are
// ignored; a JSON object with an unknown or missing type is ErrNotEvent. What it returns
// is what AppendEvent writes: a usage event without a kind is an "agent" one, a missing
// tools list is empty, and a tool input or structured output that spans lines is
// compacted; invalid UTF-8 becomes U+FFFD. So ParseEvent(AppendEvent(m)) is m for
// every message it returns.
func ParseEvent(line []byte) (Message, Envelope, error) {
	if t := bytes.TrimLeft(line, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return Message{}, Envelope{}, errors.New("parse event: not a JSON object")
	}
	var w wireEvent
	if err := json.Unmarshal(line, &w); err != nil {
		return Message{}, Envelope{}, fmt.Errorf("parse event: %w", err)
	}
	k, ok := KindOfEvent(w.Type)
	if !ok {
		return Message{}, Envelope{}, fmt.Errorf("parse event: %w: type %q", ErrNotEvent, w.Type)
	}
	env := Envelope{Seq: w.Seq}
	if w.TS != "" {
		if t, err := time.Parse(time.RFC3339Nano, w.TS); err == nil {
			env.TS = t
		}
	}
	if k != KindSessionStart && k != KindResult {
		env.SessionID, env.JobID = w.SessionID, w.JobID
	}
	m := Message{Kind: k, Parent: w.Parent}
	switch k {
	case KindText:
		m.Text = w.Content
	case KindThinking:
		m.Text, m.Signature, m.Redacted = w.Content, w.Signature, w.Redacted
	case KindToolCall:
		m.Call = ToolCall{Name: w.Name, ID: w.ID, Input: inputText(w.Input), Server: w.Server}
	case KindToolResult:
		m.Result = ToolResult{ToolUseID: w.ToolUseID, Name: w.Name, Content: w.Content, IsError: w.IsError, Server: w.Server}
	case KindUsage:
		m.Usage = Usage{Input: w.In, Output: w.Out, CacheRead: w.CacheRead, CacheCreation: w.CacheNew}
		m.UsageKind, m.SubSession = w.Kind, w.SubID
		if m.UsageKind == "" {
			m.UsageKind = "agent"
		}
	case KindStop:
		m.Stop = StopReason(w.Reason)
	case KindContextUpdate:
		m.Context = ContextUpdate{Kind: w.Kind, Trigger: w.Trigger}
	case KindError:
		m.Err = Error{Kind: ErrorKind(w.Kind), Message: w.Message}
	case KindRetry:
		m.Attempt, m.DelayMS, m.Reason = w.Attempt, w.DelayMS, w.Reason
	case KindSubAgentStart:
		m.Sub = &SubAgent{SessionID: w.SubID, Timestamp: w.Timestamp, Description: w.Desc, Prompt: w.Prompt}
	case KindSubAgentResult:
		m.Sub = &SubAgent{SessionID: w.SubID, Status: w.Status, Thinking: w.Thinking, Text: w.Text,
			Description: w.Desc, Prompt: w.Prompt, Timestamp: w.Timestamp,
			Usage: Usage{Input: w.In, Output: w.Out, CacheRead: w.CacheRead, CacheCreation: w.CacheNew}}
	case KindSubAgentEnd:
		m.Sub = &SubAgent{SessionID: w.SubID, Timestamp: w.Timestamp, Status: w.Status}
	case KindSandboxViolation:
		m.Violation = &Violation{Kind: w.Kind, Target: w.Target}
	case KindMCPStatus:
		m.MCP = &MCPServer{Name: w.Server, Transport: w.Transport, Status: w.Status, Reason: w.Reason,
			ToolCount: w.ToolCount, Required: w.Required, Restarts: w.Restarts}
	case KindSessionStart:
		m.Session = &SessionStart{SessionID: w.SessionID, JobID: w.JobID, Provenance: Provenance{
			Provider: w.Provider, Model: w.Model, Matrix: w.Matrix, Repeat: w.Repeat, Attempt: w.Attempt,
			Version: w.Version}, Cwd: w.Cwd, Tools: w.Tools, TS: w.TS, Sandbox: normalSandbox(w.Sandbox),
			MCPServers: normalMCP(w.MCP)}
		if m.Session.Tools == nil {
			m.Session.Tools = []string{}
		}
		if len(m.Session.Matrix) == 0 {
			m.Session.Matrix = nil
		}
	case KindResult:
		var r Result
		if err := json.Unmarshal(line, &r); err != nil {
			return Message{}, Envelope{}, fmt.Errorf("parse event: result: %w", err)
		}
		r.StructuredOutput = normalJSON(r.StructuredOutput, true)
		r.Sandbox = normalSandbox(r.Sandbox)
		r.MCPServers = normalMCP(r.MCPServers)
		if len(r.Matrix) == 0 {
			r.Matrix = nil // AppendEvent leaves an empty matrix out
		}
		m.Final = &r
	}
	return m, env, nil
}

// normalSandbox gives a decoded sandbox the empty layer list AppendEvent writes.
func normalSandbox(s *Sandbox) *Sandbox {
	if s != nil && s.Layers == nil {
		s.Layers = []string{}
	}
	return s
}

// inputText turns the input member of a tool_call event back into the model's text: a
// JSON string holds invalid input verbatim, anything else is the input itself.
func inputText(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			return s
		}
	}
	return string(normalJSON(raw, false))
}

// normalJSON returns a JSON value read from an event line as AppendEvent writes it:
// nil for null, invalid UTF-8 (only possible inside strings) replaced, and compacted
// when it spans lines, or always when compact is set.
func normalJSON(raw json.RawMessage, compact bool) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if !utf8.Valid(raw) {
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	}
	if compact || bytes.ContainsAny(raw, "\r\n") {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err == nil {
			return buf.Bytes()
		}
	}
	return raw
}

// Package protocol defines agentrun's internal messages and their two encodings, the
// seed's length-prefixed RESP-like frames and one JSON object per line, and the error
// kinds that HTTP statuses, provider error words and ended contexts map to; it imports
// nothing but the standard library.
package protocol

import (
	"fmt"
	"strings"
)

// Kind says what a Message is. The zero value means "unset" and is never valid.
type Kind uint8

// The message kinds. The first ten are the seed's RESP message types; the rest are the
// session envelope that agentrun adds around them.
const (
	KindText Kind = iota + 1
	KindThinking
	KindToolCall
	KindToolResult
	KindUsage
	KindStop
	KindContextUpdate
	KindSubAgentResult
	KindError
	KindRetry
	KindSessionStart
	KindSubAgentStart
	KindSubAgentEnd
	KindResult
	KindSandboxViolation
	KindMCPStatus
	kindEnd // one past the last valid kind
)

var kindNames = [...]string{
	KindText:             "TEXT",
	KindThinking:         "THINKING",
	KindToolCall:         "TOOL_CALL",
	KindToolResult:       "TOOL_RESULT",
	KindUsage:            "USAGE",
	KindStop:             "STOP",
	KindContextUpdate:    "CONTEXT_UPDATE",
	KindSubAgentResult:   "SUB_AGENT_RESULT",
	KindError:            "ERROR",
	KindRetry:            "RETRY",
	KindSessionStart:     "SESSION_START",
	KindSubAgentStart:    "SUB_AGENT_START",
	KindSubAgentEnd:      "SUB_AGENT_END",
	KindResult:           "RESULT",
	KindSandboxViolation: "SANDBOX_VIOLATION",
	KindMCPStatus:        "MCP_STATUS",
}

var eventNames = [...]string{
	KindText:             "text",
	KindThinking:         "thinking",
	KindToolCall:         "tool_call",
	KindToolResult:       "tool_result",
	KindUsage:            "usage",
	KindStop:             "stop",
	KindContextUpdate:    "context_update",
	KindSubAgentResult:   "sub_agent_result",
	KindError:            "error",
	KindRetry:            "retry",
	KindSessionStart:     "session_start",
	KindSubAgentStart:    "sub_agent_start",
	KindSubAgentEnd:      "sub_agent_end",
	KindResult:           "result",
	KindSandboxViolation: "sandbox_violation",
	KindMCPStatus:        "mcp_status",
}

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool { return k > 0 && k < kindEnd }

// String returns the RESP type name of k, such as "TOOL_CALL".
func (k Kind) String() string {
	if !k.Valid() {
		return fmt.Sprintf("Kind(%d)", uint8(k))
	}
	return kindNames[k]
}

// EventType returns the JSON event type of k, such as "tool_call".
func (k Kind) EventType() string {
	if !k.Valid() {
		return ""
	}
	return eventNames[k]
}

// KindOf returns the kind whose RESP type name is name.
func KindOf(name string) (Kind, bool) {
	for k := KindText; k < kindEnd; k++ {
		if kindNames[k] == name {
			return k, true
		}
	}
	return 0, false
}

// KindOfEvent returns the kind whose JSON event type is typ.
func KindOfEvent(typ string) (Kind, bool) {
	for k := KindText; k < kindEnd; k++ {
		if eventNames[k] == typ {
			return k, true
		}
	}
	return 0, false
}

// Message is one internal message. Which fields are meaningful depends on Kind; the
// others stay at their zero values. Messages are values: copying one is safe.
type Message struct {
	Kind Kind

	// Parent is the tool-use id of the Task call whose sub-agent produced this message;
	// empty for the top-level session.
	Parent string

	// Text is the delta of KindText and KindThinking.
	Text string
	// Signature closes a thinking block (KindThinking) with the provider's signature,
	// which must be sent back unchanged; Redacted carries a redacted_thinking block's
	// opaque data. Both are empty for plain deltas.
	Signature string
	Redacted  string

	// Call is the complete tool call of KindToolCall.
	Call ToolCall
	// Result is the output of one tool run, KindToolResult.
	Result ToolResult
	// Usage holds the token counts of KindUsage, and UsageKind says whose they are
	// ("agent", "compact" or "sub_agent"); SubSession names the sub-agent session.
	Usage      Usage
	UsageKind  string
	SubSession string
	// Stop is the stop reason of KindStop.
	Stop StopReason
	// Reason says why the transport retries, KindRetry: an error kind, a colon and the
	// failure.
	Reason string
	// Attempt and DelayMS describe KindRetry: the attempt about to be made (1 is the
	// first retry) and how long the transport waits before it.
	Attempt int
	DelayMS int64
	// Err is the failure of KindError.
	Err Error
	// Violation is what the sandbox refused, KindSandboxViolation.
	Violation *Violation
	// MCP is the state of an MCP server, KindMCPStatus.
	MCP *MCPServer
	// Context is the KindContextUpdate payload.
	Context ContextUpdate
	// Sub describes a sub-agent (KindSubAgentStart, KindSubAgentResult, KindSubAgentEnd).
	Sub *SubAgent
	// Session opens a session (KindSessionStart).
	Session *SessionStart
	// Final is the session's terminal record (KindResult).
	Final *Result
}

// ToolCall is a complete tool call from the model.
type ToolCall struct {
	Name string
	ID   string
	// Input is the input JSON exactly as the model sent it. It may be invalid JSON;
	// the encoders carry it faithfully either way.
	Input string
	// Server names the MCP server whose tool this is; empty for a built-in tool.
	Server string
}

// ToolResult is the outcome of one tool call.
type ToolResult struct {
	ToolUseID string
	Name      string
	Content   string
	IsError   bool
	// Server names the MCP server that ran the call; empty for a built-in tool.
	Server string
}

// Usage counts tokens. Input excludes cached tokens on every provider.
type Usage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:         u.Input + v.Input,
		Output:        u.Output + v.Output,
		CacheRead:     u.CacheRead + v.CacheRead,
		CacheCreation: u.CacheCreation + v.CacheCreation,
	}
}

// Total is the sum of all four counts: the size of the context a call used.
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheRead + u.CacheCreation }

// Error is a classified failure. Kind is a stable word; Message is for people and never
// contains a secret.
type Error struct {
	Kind    ErrorKind `json:"kind"`
	Message string    `json:"message"`
}

// ErrorKind is the stable word that classifies a failure, one of the Err constants.
type ErrorKind string

// The stable error kinds.
const (
	ErrRateLimit  ErrorKind = "http_429"
	ErrOverloaded ErrorKind = "overloaded"
	ErrServer     ErrorKind = "server"
	ErrTimeout    ErrorKind = "timeout"
	ErrInactivity ErrorKind = "inactivity"
	ErrAuth       ErrorKind = "auth"
	ErrRequest    ErrorKind = "request"
	ErrNetwork    ErrorKind = "network"
	ErrStream     ErrorKind = "stream"
	ErrTool       ErrorKind = "tool"
	ErrBudget     ErrorKind = "budget"
	ErrMaxTokens  ErrorKind = "max_tokens"
	// ErrTooLarge: a response passed Limits (text and thinking, or one tool input).
	ErrTooLarge  ErrorKind = "response_too_large"
	ErrMaxTurns  ErrorKind = "max_turns"
	ErrCancelled ErrorKind = "cancelled"
	ErrCompact   ErrorKind = "compact"
	ErrPanic     ErrorKind = "panic"
	ErrChecks    ErrorKind = "checks"
	ErrSchema    ErrorKind = "output_schema"
	ErrInternal  ErrorKind = "internal"
	// ErrMCP: an MCP server failed (a required one ends the session, status error_mcp;
	// an optional one is a warning); ErrMCPDeclined: a server asked for what a headless
	// session cannot give (elicitation, sampling), and was declined.
	ErrMCP         ErrorKind = "mcp"
	ErrMCPDeclined ErrorKind = "mcp_declined"
	// ErrSandbox: the session's sandbox could not be set up (status error_sandbox).
	ErrSandbox ErrorKind = "sandbox"
)

// ErrorKinds lists every stable error kind in a stable order.
func ErrorKinds() []ErrorKind {
	return []ErrorKind{
		ErrRateLimit, ErrOverloaded, ErrServer, ErrTimeout, ErrInactivity, ErrAuth, ErrRequest, ErrNetwork,
		ErrStream, ErrTool, ErrBudget, ErrMaxTokens, ErrTooLarge, ErrMaxTurns, ErrCancelled, ErrCompact,
		ErrPanic, ErrChecks, ErrSchema, ErrInternal, ErrMCP, ErrMCPDeclined, ErrSandbox,
	}
}

// Retryable reports whether an error of this kind may go away if the same request is
// made again later.
func (e Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimit, ErrOverloaded, ErrServer, ErrTimeout, ErrInactivity, ErrNetwork, ErrStream:
		return true
	case ErrAuth, ErrRequest, ErrTool, ErrBudget, ErrMaxTokens, ErrTooLarge, ErrMaxTurns, ErrCancelled, ErrCompact,
		ErrPanic, ErrChecks, ErrSchema, ErrInternal, ErrMCP, ErrMCPDeclined, ErrSandbox:
	}
	return false
}

// ContextUpdate reports that the conversation window changed (compaction).
type ContextUpdate struct {
	Kind    string `json:"kind"`
	Trigger string `json:"trigger"`
}

// SubAgent describes a sub-agent session started by a Task call.
type SubAgent struct {
	SessionID   string
	Description string
	Prompt      string
	Status      string // "ok" or "failed" once finished
	Usage       Usage
	Thinking    string
	Text        string
	Timestamp   string // RFC 3339, UTC
}

// SessionStart opens a session's event stream.
type SessionStart struct {
	SessionID string `json:"session_id"`
	JobID     string `json:"job_id"`
	Provenance
	Cwd   string   `json:"cwd"`
	Tools []string `json:"tools"`
	TS    string   `json:"ts"`
	// Sandbox is the confinement the session's tools run under; nil when unknown.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// MCPServers are the session's MCP servers as connecting left them; nil for none.
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
}

// Violation is an action of a tool that the sandbox refused or the runner undid: Kind
// is a stable word ("network_denied", "git_folder", ...), Target what it was aimed at (a
// host and port, a path).
type Violation struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
}

// Sandbox says how a session's tools are confined: the level, and the kernel layers in
// force (namespaces, landlock, seccomp, ...), comma-free words.
type Sandbox struct {
	Level  string   `json:"level"`
	Layers []string `json:"layers"`
}

// joinLayers and splitLayers carry Sandbox in RESP extension pairs.
func (s *Sandbox) joinLayers() string { return strings.Join(s.Layers, ",") }

func splitLayers(v string) []string {
	if v == "" {
		return []string{}
	}
	return strings.Split(v, ",")
}

// SchemaVersion is the version of the event schema, written in every session_start.
const SchemaVersion = 1

// CompactMarker starts the instruction of a compaction summary request, so a scripted
// model can recognise one.
const CompactMarker = "[agentrun:compact]"

package sink

import (
	"encoding/json"

	"github.com/agentrun/agentrun/protocol"
)

// The lines of the claude format: the shapes of Claude Code's stream-json
// (`claude -p --output-format stream-json --verbose`), as the Claude Agent SDK's
// SDKMessage types declare them. Members the SDK requires are always written; members
// agentrun adds (status, job_id, provider, sandbox, violation) are extra, which SDK
// consumers ignore.

// claudeInit is the system/init line that opens a session.
// claudeIDs are the session_id and uuid every line but init and result carries in the
// same place; stamp sets them as the line is written.
type claudeIDs struct {
	SessionID string `json:"session_id"`
	UUID      string `json:"uuid"`
}

func (i *claudeIDs) stamp(session, uuid string) { i.SessionID, i.UUID = session, uuid }

func (l *claudeInit) stamp(_, uuid string)   { l.UUID = uuid }
func (l *claudeResult) stamp(_, uuid string) { l.UUID = uuid }

type claudeInit struct {
	Type              string         `json:"type"`    // "system"
	Subtype           string         `json:"subtype"` // "init"
	Cwd               string         `json:"cwd"`
	SessionID         string         `json:"session_id"`
	Tools             []string       `json:"tools"`
	MCPServers        []claudeMCP    `json:"mcp_servers"`
	Model             string         `json:"model"`
	PermissionMode    string         `json:"permissionMode"`
	SlashCommands     []string       `json:"slash_commands"`
	APIKeySource      string         `json:"apiKeySource"`
	ClaudeCodeVersion string         `json:"claude_code_version"`
	OutputStyle       string         `json:"output_style"`
	Agents            []string       `json:"agents"`
	Skills            []string       `json:"skills"`
	Plugins           []claudePlugin `json:"plugins"`
	UUID              string         `json:"uuid"`
	// agentrun's own members.
	Provider      string         `json:"provider"`
	JobID         string         `json:"job_id"`
	SchemaVersion int            `json:"schema_version"`
	Sandbox       *claudeSandbox `json:"sandbox,omitempty"`
}

type claudeMCP struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

type claudePlugin struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

type claudeSandbox struct {
	Level  string   `json:"level"`
	Layers []string `json:"layers"`
}

// claudeAssistant is an assistant line: one complete Anthropic message.
type claudeAssistant struct {
	Type            string        `json:"type"` // "assistant"
	Message         claudeMessage `json:"message"`
	ParentToolUseID *string       `json:"parent_tool_use_id"`
	claudeIDs
	Error string `json:"error,omitempty"`
}

// claudeMessage is the Anthropic Messages API message (BetaMessage).
type claudeMessage struct {
	ID                string        `json:"id"`
	Type              string        `json:"type"` // "message"
	Role              string        `json:"role"` // "assistant"
	Model             string        `json:"model"`
	Content           []claudeBlock `json:"content"`
	StopReason        *string       `json:"stop_reason"`
	StopSequence      *string       `json:"stop_sequence"`
	StopDetails       *struct{}     `json:"stop_details"`
	Usage             claudeUsage   `json:"usage"`
	Container         *struct{}     `json:"container"`
	ContextManagement *struct{}     `json:"context_management"`
	Diagnostics       *struct{}     `json:"diagnostics"`
}

// claudeBlock is one content block: text, thinking, redacted_thinking, tool_use or
// (in user lines) tool_result.
type claudeBlock interface{ claudeBlock() }

type textBlock struct {
	Type      string    `json:"type"` // "text"
	Text      string    `json:"text"`
	Citations *[]string `json:"citations"`
}

type thinkingBlock struct {
	Type      string `json:"type"` // "thinking"
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type redactedThinkingBlock struct {
	Type string `json:"type"` // "redacted_thinking"
	Data string `json:"data"`
}

type toolUseBlock struct {
	Type  string `json:"type"` // "tool_use"
	ID    string `json:"id"`
	Name  string `json:"name"`
	Input any    `json:"input"` // json.RawMessage, or the model's text when it is not JSON
}

type toolResultBlock struct {
	Type      string `json:"type"` // "tool_result"
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error"`
}

func (textBlock) claudeBlock()             {}
func (thinkingBlock) claudeBlock()         {}
func (redactedThinkingBlock) claudeBlock() {}
func (toolUseBlock) claudeBlock()          {}
func (toolResultBlock) claudeBlock()       {}

// claudeUsage is the usage of an assistant message (BetaUsage): the nullable members
// are null.
type claudeUsage struct {
	InputTokens              int64     `json:"input_tokens"`
	OutputTokens             int64     `json:"output_tokens"`
	CacheCreationInputTokens int64     `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64     `json:"cache_read_input_tokens"`
	CacheCreation            *struct{} `json:"cache_creation"`
	ServerToolUse            *struct{} `json:"server_tool_use"`
	ServiceTier              *string   `json:"service_tier"`
	InferenceGeo             *string   `json:"inference_geo"`
	Iterations               *struct{} `json:"iterations"`
	Speed                    *string   `json:"speed"`
	OutputTokensDetails      *struct{} `json:"output_tokens_details"`
	FallbackCredit           *struct{} `json:"fallback_credit"`
}

// claudeUser is a user line carrying one tool result.
type claudeUser struct {
	Type            string            `json:"type"` // "user"
	Message         claudeUserMessage `json:"message"`
	ParentToolUseID *string           `json:"parent_tool_use_id"`
	claudeIDs
}

type claudeUserMessage struct {
	Role    string        `json:"role"` // "user"
	Content []claudeBlock `json:"content"`
}

// claudeRetry is a system/api_retry line.
type claudeRetry struct {
	Type         string `json:"type"`    // "system"
	Subtype      string `json:"subtype"` // "api_retry"
	Attempt      int    `json:"attempt"`
	MaxRetries   int    `json:"max_retries"`
	RetryDelayMS int64  `json:"retry_delay_ms"`
	ErrorStatus  *int   `json:"error_status"`
	Error        string `json:"error"`
	claudeIDs
	Reason string `json:"reason"` // agentrun's retry reason
}

// claudeCompact is a system/compact_boundary line.
type claudeCompact struct {
	Type            string            `json:"type"`    // "system"
	Subtype         string            `json:"subtype"` // "compact_boundary"
	CompactMetadata claudeCompactMeta `json:"compact_metadata"`
	claudeIDs
	ParentToolUseID *string `json:"parent_tool_use_id,omitempty"`
}

type claudeCompactMeta struct {
	Trigger   string `json:"trigger"` // "manual" or "auto"
	PreTokens int64  `json:"pre_tokens"`
}

// claudeInfo is a system/informational line: agentrun's sandbox violations and the
// errors that are not the model API's.
type claudeInfo struct {
	Type    string `json:"type"`    // "system"
	Subtype string `json:"subtype"` // "informational"
	Content string `json:"content"`
	Level   string `json:"level"` // "warning"
	Tag     string `json:"tag"`   // "sandbox_violation" or "error"
	claudeIDs
	ParentToolUseID *string            `json:"parent_tool_use_id,omitempty"`
	Violation       *claudeViolation   `json:"violation,omitempty"`
	ErrorKind       protocol.ErrorKind `json:"error_kind,omitempty"`
}

type claudeViolation struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
}

// claudeTaskStarted and claudeTaskNotification frame a sub-agent (system/task_started,
// system/task_notification); task_id is the sub-agent's session id and tool_use_id
// the Task call that started it.
type claudeTaskStarted struct {
	Type        string `json:"type"`    // "system"
	Subtype     string `json:"subtype"` // "task_started"
	TaskID      string `json:"task_id"`
	ToolUseID   string `json:"tool_use_id"`
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	claudeIDs
}

type claudeTaskNotification struct {
	Type       string `json:"type"`    // "system"
	Subtype    string `json:"subtype"` // "task_notification"
	TaskID     string `json:"task_id"`
	ToolUseID  string `json:"tool_use_id"`
	Status     string `json:"status"` // "completed" or "failed"
	OutputFile string `json:"output_file"`
	Summary    string `json:"summary"`
	claudeIDs
}

// claudeResult is the final result line.
type claudeResult struct {
	Type              string                      `json:"type"` // "result"
	Subtype           string                      `json:"subtype"`
	IsError           bool                        `json:"is_error"`
	DurationMS        int64                       `json:"duration_ms"`
	DurationAPIMS     int64                       `json:"duration_api_ms"`
	NumTurns          int                         `json:"num_turns"`
	Result            string                      `json:"result"`
	StopReason        *string                     `json:"stop_reason"`
	SessionID         string                      `json:"session_id"`
	TotalCostUSD      float64                     `json:"total_cost_usd"`
	Usage             claudeResultUsage           `json:"usage"`
	ModelUsage        map[string]claudeModelUsage `json:"modelUsage"`
	PermissionDenials []struct{}                  `json:"permission_denials"`
	StructuredOutput  json.RawMessage             `json:"structured_output,omitempty"`
	TerminalReason    string                      `json:"terminal_reason,omitempty"`
	Errors            []string                    `json:"errors,omitempty"`
	UUID              string                      `json:"uuid"`
	// agentrun's own members.
	Status    string         `json:"status"`
	JobID     string         `json:"job_id"`
	CostKnown bool           `json:"cost_known"`
	Error     *claudeErr     `json:"error,omitempty"`
	Sandbox   *claudeSandbox `json:"sandbox,omitempty"`
}

type claudeErr struct {
	Kind    protocol.ErrorKind `json:"kind"`
	Message string             `json:"message"`
}

// claudeResultUsage is the result's usage (NonNullableUsage): every member is set.
type claudeResultUsage struct {
	InputTokens              int64               `json:"input_tokens"`
	OutputTokens             int64               `json:"output_tokens"`
	CacheCreationInputTokens int64               `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64               `json:"cache_read_input_tokens"`
	CacheCreation            claudeCacheCreation `json:"cache_creation"`
	ServerToolUse            claudeServerToolUse `json:"server_tool_use"`
	ServiceTier              string              `json:"service_tier"`
	InferenceGeo             string              `json:"inference_geo"`
	Iterations               []struct{}          `json:"iterations"`
	Speed                    string              `json:"speed"`
	OutputTokensDetails      claudeOutputDetails `json:"output_tokens_details"`
	FallbackCredit           *struct{}           `json:"fallback_credit"`
}

type claudeCacheCreation struct {
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
	Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
}

type claudeServerToolUse struct {
	WebFetchRequests  int64 `json:"web_fetch_requests"`
	WebSearchRequests int64 `json:"web_search_requests"`
}

type claudeOutputDetails struct {
	ThinkingTokens int64 `json:"thinking_tokens"`
}

// claudeModelUsage is one model's entry in the result's modelUsage.
type claudeModelUsage struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	WebSearchRequests        int64   `json:"webSearchRequests"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int64   `json:"contextWindow"`
	MaxOutputTokens          int64   `json:"maxOutputTokens"`
}

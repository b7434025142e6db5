package sink

import (
	"encoding/json"
	"math"

	"github.com/agentrun/agentrun/protocol"
)

// init writes the system/init line of s.
func (c *Claude) init(s *protocol.SessionStart) error {
	if s == nil {
		s = &protocol.SessionStart{}
	}
	c.session, c.model = s.SessionID, s.Model
	tools := s.Tools
	if tools == nil {
		tools = []string{}
	}
	return c.line(&claudeInit{Type: "system", Subtype: "init", Cwd: s.Cwd, SessionID: s.SessionID, Tools: tools,
		MCPServers: claudeMCPServers(s.MCPServers), Model: s.Model, PermissionMode: "bypassPermissions", SlashCommands: []string{},
		APIKeySource: "none", ClaudeCodeVersion: c.version, OutputStyle: "default", Agents: []string{},
		Skills: []string{}, Plugins: []claudePlugin{}, Provider: s.Provider, JobID: s.JobID,
		SchemaVersion: protocol.SchemaVersion, Sandbox: sandboxOf(s.Sandbox)})
}

// result writes the result line of r.
func (c *Claude) result(r *protocol.Result) error {
	if r == nil {
		r = &protocol.Result{}
	}
	if c.session == "" {
		c.session = r.SessionID
	}
	cost, known := 0.0, false
	if r.TotalCostUSD != nil && !math.IsNaN(*r.TotalCostUSD) && !math.IsInf(*r.TotalCostUSD, 0) {
		cost, known = *r.TotalCostUSD, true
	}
	out := claudeResult{Type: "result", Subtype: r.Status.Subtype(), IsError: r.IsError || r.Status != protocol.StatusSuccess,
		DurationMS: r.DurationMS, DurationAPIMS: r.DurationAPIMS, NumTurns: r.NumTurns, Result: r.Result,
		StopReason: optString(string(r.StopReason)), SessionID: c.session, TotalCostUSD: cost, CostKnown: known,
		ModelUsage: map[string]claudeModelUsage{}, PermissionDenials: []struct{}{},
		TerminalReason: terminalReason(r.Status), Status: string(r.Status), JobID: r.JobID, Sandbox: sandboxOf(r.Sandbox),
		Usage: claudeResultUsage{InputTokens: r.Usage.Input, OutputTokens: r.Usage.Output,
			CacheCreationInputTokens: r.Usage.CacheCreation, CacheReadInputTokens: r.Usage.CacheRead,
			ServiceTier: "standard", Iterations: []struct{}{}, Speed: "standard"}}
	if c.model != "" {
		out.ModelUsage[c.model] = claudeModelUsage{InputTokens: r.Usage.Input, OutputTokens: r.Usage.Output,
			CacheReadInputTokens: r.Usage.CacheRead, CacheCreationInputTokens: r.Usage.CacheCreation, CostUSD: cost}
	}
	if len(r.StructuredOutput) > 0 && json.Valid(r.StructuredOutput) {
		out.StructuredOutput = r.StructuredOutput
	}
	if r.Error != nil {
		out.Error = &claudeErr{Kind: r.Error.Kind, Message: r.Error.Message}
	}
	if out.Subtype != "success" {
		msg := string(r.Status)
		if r.Error != nil && r.Error.Message != "" {
			msg = r.Error.Message
		}
		out.Errors = []string{msg}
	}
	return c.line(&out)
}

func sandboxOf(s *protocol.Sandbox) *claudeSandbox {
	if s == nil {
		return nil
	}
	layers := s.Layers
	if layers == nil {
		layers = []string{}
	}
	return &claudeSandbox{Level: s.Level, Layers: layers}
}

// usageOf is a model call's usage in an assistant message.
func usageOf(u protocol.Usage) claudeUsage {
	return claudeUsage{InputTokens: u.Input, OutputTokens: u.Output, CacheCreationInputTokens: u.CacheCreation,
		CacheReadInputTokens: u.CacheRead}
}

// claudeStopReason maps a stop reason onto the Anthropic API's words, which are
// protocol.StopReason's; a provider's own word, which its decoder carried as it came,
// becomes end_turn, since Claude Code knows only the API's.
func claudeStopReason(r protocol.StopReason) string {
	switch r {
	case protocol.StopEndTurn, protocol.StopToolUse, protocol.StopMaxTokens, protocol.StopSequence,
		protocol.StopPauseTurn, protocol.StopRefusal, protocol.StopContextWindow:
		return string(r)
	}
	return string(protocol.StopEndTurn)
}

// isAPIKind reports whether an error kind is a failure of the model API, which Claude
// Code reports as a synthetic assistant message.
func isAPIKind(kind protocol.ErrorKind) bool {
	switch kind {
	case protocol.ErrRateLimit, protocol.ErrOverloaded, protocol.ErrServer, protocol.ErrTimeout,
		protocol.ErrInactivity, protocol.ErrAuth, protocol.ErrRequest, protocol.ErrNetwork, protocol.ErrStream,
		protocol.ErrMaxTokens:
		return true
	case protocol.ErrTool, protocol.ErrBudget, protocol.ErrTooLarge, protocol.ErrMaxTurns, protocol.ErrCancelled,
		protocol.ErrCompact, protocol.ErrPanic, protocol.ErrChecks, protocol.ErrSchema, protocol.ErrInternal,
		protocol.ErrMCP, protocol.ErrMCPDeclined, protocol.ErrSandbox:
	}
	return false
}

// apiError maps an error kind onto the HTTP status Claude Code reports (nil when there
// is none) and its SDKAssistantMessageError word.
func apiError(kind protocol.ErrorKind) (*int, string) {
	status := func(n int) *int { return &n }
	switch kind {
	case protocol.ErrRateLimit:
		return status(429), "rate_limit"
	case protocol.ErrOverloaded:
		return status(529), "overloaded"
	case protocol.ErrServer:
		return status(500), "server_error"
	case protocol.ErrAuth:
		return status(401), "authentication_failed"
	case protocol.ErrRequest:
		return status(400), "invalid_request"
	case protocol.ErrMaxTokens:
		return nil, "max_output_tokens"
	default:
		// Claude Code has no word for the others (timeouts, network and stream trouble).
		return nil, "unknown"
	}
}

// terminalReason is Claude Code's terminal_reason for a status; empty when none fits.
func terminalReason(s protocol.Status) string {
	switch s {
	case protocol.StatusSuccess, protocol.StatusChecks:
		return "completed"
	case protocol.StatusMaxTurns:
		return "max_turns"
	case protocol.StatusBudget:
		return "budget_exhausted"
	case protocol.StatusOutputSchema:
		return "structured_output_retry_exhausted"
	case protocol.StatusProvider, protocol.StatusAuth, protocol.StatusRequest, protocol.StatusMaxTokens:
		return "api_error"
	case protocol.StatusCancelled, protocol.StatusTimeout, protocol.StatusInactivity:
		return "aborted_streaming"
	case protocol.StatusCrashed, protocol.StatusMCP, protocol.StatusSandbox:
		return ""
	}
	return ""
}

// optString is nil for "", for the members Claude Code writes as null then.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

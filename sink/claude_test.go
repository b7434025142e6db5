package sink_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

func claudeStart() protocol.Message {
	return protocol.Message{Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{SessionID: "s1", JobID: "fix",
		Provenance: protocol.Provenance{Provider: "anthropic", Model: "claude-sonnet-4-5"}, Cwd: "/work", Tools: []string{"Bash", "Task"},
		Sandbox: &protocol.Sandbox{Level: "strict", Layers: []string{"landlock", "seccomp"}}}}
}

func claudeResult(status protocol.Status, out string) protocol.Message {
	cost := 0.0123
	r := &protocol.Result{SessionID: "s1", JobID: "fix", Status: status, IsError: status != protocol.StatusSuccess,
		StopReason: "end_turn", NumTurns: 2, DurationMS: 1500, DurationAPIMS: 900, TotalCostUSD: &cost,
		Usage:  protocol.Usage{Input: 120, Output: 30, CacheRead: 7, CacheCreation: 3},
		Result: "All done."}
	if out != "" {
		r.StructuredOutput = json.RawMessage(out)
	}
	if status != protocol.StatusSuccess {
		r.Error = &protocol.Error{Kind: protocol.ErrMaxTurns, Message: "max turns (2) reached"}
	}
	return protocol.Message{Kind: protocol.KindResult, Final: r}
}

// claudeCases are the sessions the claude sink's golden files hold; the cmd package's
// SDK type check reads the same golden files.
func claudeCases() map[string][]protocol.Message {
	return map[string][]protocol.Message{
		"mcp": {
			{Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{SessionID: "s1", JobID: "fix",
				Provenance: protocol.Provenance{Provider: "scripted", Model: "scripted"}, Cwd: "/work", Tools: []string{"Bash", "mcp__gh__search"},
				MCPServers: []protocol.MCPServer{{Name: "gh", Transport: "stdio", Status: protocol.MCPConnected, ToolCount: 1},
					{Name: "db", Transport: "http", Status: protocol.MCPNeedsAuth, Reason: "HTTP 401"},
					{Name: "slow", Transport: "stdio", Status: protocol.MCPTimeout, Reason: "no answer to initialize within 30s"}}}},
			{Kind: protocol.KindMCPStatus, MCP: &protocol.MCPServer{Name: "gh", Transport: "stdio", Status: protocol.MCPConnected, ToolCount: 1}},
			{Kind: protocol.KindMCPStatus, MCP: &protocol.MCPServer{Name: "db", Transport: "http", Status: protocol.MCPNeedsAuth, Reason: "HTTP 401"}},
			{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "mcp__gh__search", ID: "tu1", Input: `{"q":"bug"}`, Server: "gh"}},
			{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: "tu1", Name: "mcp__gh__search", Content: "3 issues", Server: "gh"}},
			{Kind: protocol.KindMCPStatus, MCP: &protocol.MCPServer{Name: "gh", Transport: "stdio", Status: protocol.MCPCrashed, ToolCount: 1, Reason: "exit status 2"}},
			{Kind: protocol.KindMCPStatus, MCP: &protocol.MCPServer{Name: "gh", Transport: "stdio", Status: protocol.MCPRestarted, ToolCount: 1, Restarts: 1}},
			{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 10, Output: 5}},
			{Kind: protocol.KindStop, Stop: "tool_use"},
			{Kind: protocol.KindText, Text: "Found 3."},
			{Kind: protocol.KindStop, Stop: "end_turn"},
			claudeResult(protocol.StatusSuccess, ""),
		},
		"tools": {
			claudeStart(),
			{Kind: protocol.KindThinking, Text: "Look at "},
			{Kind: protocol.KindThinking, Text: "the folder.", Signature: "sig1"},
			{Kind: protocol.KindText, Text: "I will "},
			{Kind: protocol.KindText, Text: "run <ls> & \"see\"."},
			{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", ID: "tu1", Input: `{"command":"ls"}`}},
			{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: "tu1", Name: "Bash", Content: "a\nb\n"}},
			{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", ID: "tu2", Input: `{"command": broken`}},
			{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: "tu2", Name: "Bash", Content: "invalid tool input", IsError: true}},
			{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 100, Output: 20}, UsageKind: "agent"},
			{Kind: protocol.KindStop, Stop: "tool_use"},
			{Kind: protocol.KindThinking, Redacted: "opaque"},
			{Kind: protocol.KindText, Text: "All done."},
			{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 20, Output: 10, CacheRead: 7, CacheCreation: 3}},
			{Kind: protocol.KindStop, Stop: "end_turn"},
			claudeResult(protocol.StatusSuccess, ""),
		},
		"notices": {
			claudeStart(),
			{Kind: protocol.KindText, Text: "Partial answer that a retry discards"},
			{Kind: protocol.KindRetry, Attempt: 1, DelayMS: 500, Reason: "overloaded: HTTP 529"},
			{Kind: protocol.KindText, Text: "Working."},
			{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 5000, Output: 10}},
			{Kind: protocol.KindStop, Stop: "end_turn"},
			{Kind: protocol.KindContextUpdate, Context: protocol.ContextUpdate{Kind: "compact", Trigger: "auto"}},
			{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 4000, Output: 200}, UsageKind: "compact"},
			{Kind: protocol.KindSandboxViolation, Violation: &protocol.Violation{Kind: "network_denied", Target: "example.com:443"}},
			{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrRateLimit, Message: "HTTP 429: slow down"}},
			{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrMaxTurns, Message: "max turns (2) reached"}},
			claudeResult(protocol.StatusMaxTurns, ""),
		},
		"sub_agent": {
			claudeStart(),
			{Kind: protocol.KindText, Text: "Delegating."},
			{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Task", ID: "task1", Input: `{"description":"count","prompt":"Count."}`}},
			{Kind: protocol.KindSubAgentStart, Parent: "task1", Sub: &protocol.SubAgent{SessionID: "sub1", Description: "count", Prompt: "Count."}},
			{Kind: protocol.KindText, Parent: "task1", Text: "Three files."},
			{Kind: protocol.KindUsage, Parent: "task1", Usage: protocol.Usage{Input: 10, Output: 3}, UsageKind: "agent"},
			{Kind: protocol.KindStop, Parent: "task1", Stop: "end_turn"},
			{Kind: protocol.KindUsage, Parent: "task1", Usage: protocol.Usage{Input: 10, Output: 3}, UsageKind: "sub_agent", SubSession: "sub1"},
			{Kind: protocol.KindSubAgentResult, Parent: "task1", Sub: &protocol.SubAgent{SessionID: "sub1", Status: "ok", Text: "Three files."}},
			{Kind: protocol.KindSubAgentEnd, Parent: "task1", Sub: &protocol.SubAgent{SessionID: "sub1", Status: "ok"}},
			{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: "task1", Name: "Task", Content: "Three files."}},
			{Kind: protocol.KindStop, Stop: "tool_use"},
			{Kind: protocol.KindText, Text: `{"files":3}`},
			{Kind: protocol.KindStop, Stop: "end_turn"},
			claudeResult(protocol.StatusSuccess, `{"files":3}`),
		},
	}
}

// TestClaude checks the claude format of whole sessions against golden files,
// compared line by line as JSON values.
func TestClaude(t *testing.T) {
	for name, msgs := range claudeCases() {
		t.Run(name, func(t *testing.T) {
			got := claudeLines(t, msgs, nil)
			path := filepath.Join("testdata", "TestClaude", name+".jsonl")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./sink -run TestClaude -update")
			wantLines, gotLines := strings.Split(string(want), "\n"), strings.Split(got, "\n")
			require.Len(t, gotLines, len(wantLines))
			for i := range wantLines {
				if wantLines[i] == "" {
					assert.Empty(t, gotLines[i])
					continue
				}
				assert.JSONEq(t, wantLines[i], gotLines[i], "line %d", i+1)
			}
		})
	}
}

// claudeLines writes msgs through a Claude sink, behind a redactor of secrets.
func claudeLines(t *testing.T, msgs []protocol.Message, secrets []string) string {
	t.Helper()
	var buf bytes.Buffer
	s := sink.NewRedactor(sink.NewClaude(&buf, "v1.2.3"), secrets)
	for _, m := range msgs {
		require.NoError(t, s.Write(m))
	}
	require.NoError(t, s.Close())
	return buf.String()
}

// TestClaudeContract checks what every consumer relies on: session_id and a unique
// uuid on every line, system/init first and result last, the same message id on the
// lines of one model call, and the same lines for the same events.
func TestClaudeContract(t *testing.T) {
	for name, msgs := range claudeCases() {
		t.Run(name, func(t *testing.T) {
			out := claudeLines(t, msgs, nil)
			assert.Equal(t, out, claudeLines(t, msgs, nil), "replaying the same events writes the same lines")
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			seen := map[string]bool{}
			for i, l := range lines {
				var v struct {
					Type, Subtype, SessionID, UUID string
				}
				var raw map[string]json.RawMessage
				require.NoError(t, json.Unmarshal([]byte(l), &raw), l)
				require.NoError(t, json.Unmarshal([]byte(l), &v))
				assert.Equal(t, `"s1"`, string(raw["session_id"]), "line %d", i+1)
				assert.Regexp(t, `^"[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$`, string(raw["uuid"]))
				assert.False(t, seen[string(raw["uuid"])], "uuid of line %d is unique", i+1)
				seen[string(raw["uuid"])] = true
				switch i {
				case 0:
					assert.Equal(t, `"init"`, string(raw["subtype"]))
				case len(lines) - 1:
					assert.Equal(t, `"result"`, string(raw["type"]))
				default:
					assert.NotEqual(t, `"result"`, string(raw["type"]))
				}
			}
		})
	}
}

// TestClaudeStatuses checks the subtype, is_error and errors of each status, with
// agentrun's status kept alongside.
func TestClaudeStatuses(t *testing.T) {
	want := map[protocol.Status]string{
		protocol.StatusSuccess: "success", protocol.StatusMaxTurns: "error_max_turns",
		protocol.StatusBudget: "error_max_budget_usd", protocol.StatusOutputSchema: "error_max_structured_output_retries",
	}
	for _, st := range protocol.Statuses() {
		t.Run(string(st), func(t *testing.T) {
			out := claudeLines(t, []protocol.Message{claudeStart(), claudeResult(st, "")}, nil)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			var r struct {
				Subtype string   `json:"subtype"`
				IsError bool     `json:"is_error"`
				Status  string   `json:"status"`
				Errors  []string `json:"errors"`
			}
			require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &r))
			sub, ok := want[st]
			if !ok {
				sub = "error_during_execution"
			}
			assert.Equal(t, sub, r.Subtype)
			assert.Equal(t, st != protocol.StatusSuccess, r.IsError)
			assert.Equal(t, string(st), r.Status)
			assert.Equal(t, st != protocol.StatusSuccess, len(r.Errors) > 0, "error subtypes carry errors")
		})
	}
}

// TestClaudeRedacted checks that behind the redactor no line of the claude format
// carries a secret.
func TestClaudeRedacted(t *testing.T) {
	const secret = "sk-secret-123456"
	msgs := []protocol.Message{claudeStart(),
		{Kind: protocol.KindText, Text: "the key is sk-secret-"},
		{Kind: protocol.KindText, Text: "123456."},
		{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", ID: "t1", Input: `{"command":"echo ` + secret + `"}`}},
		{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: "t1", Name: "Bash", Content: secret}},
		{Kind: protocol.KindSandboxViolation, Violation: &protocol.Violation{Kind: "network_denied", Target: secret + ".example:443"}},
		{Kind: protocol.KindStop, Stop: "end_turn"},
		claudeResult(protocol.StatusSuccess, `{"key":"`+secret+`"}`),
	}
	out := claudeLines(t, msgs, []string{secret})
	assert.NotContains(t, out, "sk-secret")
	assert.Contains(t, out, sink.Mask)
}

package eventschema_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/protocol/eventschema"
)

// samples holds one message of every kind, with every optional field set.
func samples() []protocol.Message {
	cost := 0.5
	return []protocol.Message{
		{Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{SessionID: "s", JobID: "j", Provenance: protocol.Provenance{Provider: "anthropic",
			Model: "m", Matrix: map[string]string{"model": "m"}, Repeat: 2, Attempt: 1, Version: "v1.0.0"}, Cwd: "/w", Tools: []string{"Bash"}, TS: "2026-05-06T12:00:00.000Z",
			Sandbox:    &protocol.Sandbox{Level: "strict", Layers: []string{"landlock"}},
			MCPServers: []protocol.MCPServer{{Name: "gh", Transport: "stdio", Status: protocol.MCPConnected, ToolCount: 2}}}},
		{Kind: protocol.KindText, Text: "hi"},
		{Kind: protocol.KindThinking, Text: "hm", Signature: "sig", Redacted: "r"},
		{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", ID: "t1", Input: `{"command":"ls"}`}},
		{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", ID: "t2", Input: `{broken`}},
		{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: "t1", Name: "Bash", Content: "x", IsError: true}},
		{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 1, Output: 2, CacheRead: 3, CacheCreation: 4}, UsageKind: "sub_agent", SubSession: "sub"},
		{Kind: protocol.KindStop, Stop: "end_turn"},
		{Kind: protocol.KindContextUpdate, Context: protocol.ContextUpdate{Kind: "compact", Trigger: "auto"}},
		{Kind: protocol.KindSubAgentResult, Parent: "t1", Sub: &protocol.SubAgent{SessionID: "sub", Status: "ok", Text: "t",
			Description: "d", Prompt: "p", Timestamp: "2026-05-06T12:00:00.000Z"}},
		{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrTool, Message: "m"}},
		{Kind: protocol.KindRetry, Attempt: 1, DelayMS: 10, Reason: "overloaded: x"},
		{Kind: protocol.KindSubAgentStart, Parent: "t1", Sub: &protocol.SubAgent{SessionID: "sub", Description: "d", Prompt: "p"}},
		{Kind: protocol.KindSubAgentEnd, Parent: "t1", Sub: &protocol.SubAgent{SessionID: "sub", Status: "ok"}},
		{Kind: protocol.KindSandboxViolation, Violation: &protocol.Violation{Kind: "network_denied", Target: "h:443"}},
		{Kind: protocol.KindMCPStatus, MCP: &protocol.MCPServer{Name: "gh", Transport: "http", Status: protocol.MCPNeedsAuth,
			Reason: "401", Required: true}},
		{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "mcp__gh__search", ID: "t3", Input: `{}`, Server: "gh"}},
		{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: "t3", Name: "mcp__gh__search", Content: "x", Server: "gh"}},
		{Kind: protocol.KindResult, Final: &protocol.Result{SessionID: "s", JobID: "j", Provenance: protocol.Provenance{Provider: "openai", Model: "m", Matrix: map[string]string{"x": "1"}, Repeat: 1, Attempt: 2, Version: "v1"}, Status: protocol.StatusChecks,
			IsError: true, TotalCostUSD: &cost, StructuredOutput: json.RawMessage(`{"a":1}`),
			Checks: []protocol.Check{{Name: "c", ExitCode: 3}}, Error: &protocol.Error{Kind: "checks", Message: "m"},
			SpecDigest: "d", Key: "k", Sandbox: &protocol.Sandbox{Level: "off"},
			MCPServers: []protocol.MCPServer{{Name: "gh", Transport: "stdio", Status: protocol.MCPRestarted, ToolCount: 1, Restarts: 1}}}},
		{Kind: protocol.KindResult, Final: &protocol.Result{Status: protocol.StatusMCP, Error: &protocol.Error{Kind: protocol.ErrMCP, Message: "m"}}},
		{Kind: protocol.KindResult, Final: &protocol.Result{Status: protocol.StatusSuccess}},
	}
}

// TestSchemaCoversEveryKind checks that a line of every kind, as AppendEvent writes it
// with every envelope (none, events.jsonl's, the run's stream-json), is valid.
func TestSchemaCoversEveryKind(t *testing.T) {
	seen := map[protocol.Kind]bool{}
	envs := map[string]protocol.Envelope{
		"stream.jsonl": {},
		"events.jsonl": {Seq: 7, TS: time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)},
		"run stdout":   {SessionID: "s", JobID: "j"},
	}
	for name, env := range envs {
		t.Run(name, func(t *testing.T) {
			for _, m := range samples() {
				seen[m.Kind] = true
				line, err := protocol.AppendEvent(nil, m, env)
				require.NoError(t, err)
				assert.NoError(t, eventschema.ValidateLine(line), "%s", line)
			}
		})
	}
	for k := protocol.KindText; k.Valid(); k++ {
		assert.True(t, seen[k], "a sample of %s", k.EventType())
	}
}

// TestSchemaRejects checks that the schema is strict.
func TestSchemaRejects(t *testing.T) {
	tests := map[string]string{
		"unknown type":      `{"type":"bogus"}`,
		"no type":           `{"content":"x"}`,
		"undeclared member": `{"type":"text","content":"x","colour":"red"}`,
		"missing member":    `{"type":"tool_result","tool_use_id":"t","name":"Bash","content":"x"}`,
		"wrong type":        `{"type":"retry","attempt":"1","delay_ms":0,"reason":"r"}`,
		"bad status":        `{"type":"result","status":"fine"}`,
		"bad mcp status":    `{"type":"mcp_status","server":"s","transport":"stdio","status":"up","reason":"","tool_count":0,"required":false,"restarts":0}`,
		"bad ts":            `{"type":"text","content":"x","ts":"yesterday"}`,
		"other version":     `{"type":"session_start","schema_version":2,"session_id":"s","job_id":"j","provider":"p","model":"m","cwd":"/","tools":[],"ts":"2026-05-06T12:00:00Z"}`,
	}
	for name, line := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Error(t, eventschema.ValidateLine([]byte(line)))
		})
	}
}

// TestSchemaDocument checks the document's dialect, $id and version.
func TestSchemaDocument(t *testing.T) {
	var doc struct {
		Schema string `json:"$schema"`
		ID     string `json:"$id"`
	}
	require.NoError(t, json.Unmarshal(eventschema.Schema(), &doc))
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc.Schema)
	assert.Equal(t, eventschema.ID, doc.ID)
	assert.Equal(t, 1, protocol.SchemaVersion, "a new schema_version needs a new schema document")
}

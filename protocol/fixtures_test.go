package protocol_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
)

// messagesWith returns messages of every kind, with every string field holding s (or a
// value built from it), so the codecs are tested on the bytes of s wherever they occur.
func messagesWith(s string) map[string]protocol.Message {
	cost := 0.0123
	quoted, _ := json.Marshal(s) // replaces invalid UTF-8, so the object stays valid
	return map[string]protocol.Message{
		"text":                 {Kind: protocol.KindText, Text: s},
		"text of a sub-agent":  {Kind: protocol.KindText, Text: s, Parent: "toolu_task" + s},
		"thinking":             {Kind: protocol.KindThinking, Text: s},
		"thinking with extras": {Kind: protocol.KindThinking, Text: s, Signature: "sig" + s, Redacted: s + "x", Parent: "p"},
		"tool call raw input": {Kind: protocol.KindToolCall,
			Call: protocol.ToolCall{Name: "Bash" + s, ID: "toolu_01" + s, Input: s}},
		"tool call object input": {Kind: protocol.KindToolCall,
			Call: protocol.ToolCall{Name: "Bash", ID: "toolu_02", Input: `{"command":` + string(quoted) + `,"timeout":30,"env":{"A":[1,2]}}`}},
		"tool result": {Kind: protocol.KindToolResult,
			Result: protocol.ToolResult{ToolUseID: "toolu_01" + s, Name: "Bash" + s, Content: s, IsError: true}},
		"tool result ok": {Kind: protocol.KindToolResult,
			Result: protocol.ToolResult{ToolUseID: "toolu_01", Name: "Read", Content: s}},
		"usage": {Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 1, Output: 2, CacheRead: 3, CacheCreation: 4},
			UsageKind: "sub_agent", SubSession: "sub_" + s},
		"stop":           {Kind: protocol.KindStop, Stop: protocol.StopEndTurn + protocol.StopReason(s)},
		"context update": {Kind: protocol.KindContextUpdate, Context: protocol.ContextUpdate{Kind: "compact" + s, Trigger: s}},
		"sub-agent result": {Kind: protocol.KindSubAgentResult, Parent: "toolu_task", Sub: &protocol.SubAgent{
			SessionID: "sub_1" + s, Status: "ok", Thinking: s, Text: s + "done", Description: "scan" + s,
			Prompt: "look" + s, Timestamp: "2026-05-06T12:00:00Z",
			Usage: protocol.Usage{Input: 900, Output: 120, CacheRead: 7, CacheCreation: 8}}},
		"error": {Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrRateLimit, Message: s}},
		"retry": {Kind: protocol.KindRetry, Attempt: 2, DelayMS: 1500, Reason: "http_429 " + s},
		"session start": {Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{
			SessionID: "s1" + s, JobID: "fix-vet" + s, Provenance: protocol.Provenance{Provider: "anthropic", Model: "claude-sonnet-4-6" + s,
				Matrix: map[string]string{"model": "m" + s, s: s}, Repeat: 3, Attempt: 2, Version: "v1.2.3" + s},
			Cwd: "/work/" + s, Tools: []string{"Read", s, "Bash"}, TS: "2026-05-06T12:00:00.000Z"}},
		"session start with sandbox": {Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{
			SessionID: "s1", Tools: []string{}, TS: "2026-05-06T12:00:00.000Z",
			Sandbox: &protocol.Sandbox{Level: "strict", Layers: []string{"userns", "landlock"}}}},
		"sub-agent start": {Kind: protocol.KindSubAgentStart, Parent: "toolu_task", Sub: &protocol.SubAgent{
			SessionID: "sub_1" + s, Description: "scan" + s, Prompt: s, Timestamp: "2026-05-06T12:00:00Z"}},
		"sub-agent end": {Kind: protocol.KindSubAgentEnd, Sub: &protocol.SubAgent{
			SessionID: "sub_1" + s, Status: "failed", Timestamp: "2026-05-06T12:03:00Z"}},
		"result": {Kind: protocol.KindResult, Final: &protocol.Result{
			SessionID: "s1" + s, JobID: "fix-vet" + s, Status: protocol.StatusSuccess, StopReason: "end_turn",
			Provenance: protocol.Provenance{Provider: "openai" + s, Model: "gpt-5.4" + s,
				Matrix: map[string]string{"sandbox.level": s}, Repeat: 1, Attempt: 2, Version: "(devel)" + s},
			NumTurns: 4, DurationMS: 3200, DurationAPIMS: 2100,
			Usage:        protocol.Usage{Input: 1234, Output: 567, CacheRead: 89, CacheCreation: 10},
			TotalCostUSD: &cost, Result: s, StructuredOutput: json.RawMessage(`{"answer":` + string(quoted) + `}`),
			Checks: []protocol.Check{
				{Name: "vet" + s, Passed: true, DurationMS: 400, Output: s},
				{Name: "test", ExitCode: 1, DurationMS: 9000, Output: "FAIL"},
			},
			Error:   &protocol.Error{Kind: protocol.ErrChecks, Message: s},
			Retries: 1, Attempts: 2, SpecDigest: "sha256:" + s, Key: "fix-vet.r1" + s}},
		"result with nulls": {Kind: protocol.KindResult, Final: &protocol.Result{
			SessionID: "s2", Status: protocol.StatusCrashed, IsError: true, Result: s}},
		"sandbox violation": {Kind: protocol.KindSandboxViolation, Violation: &protocol.Violation{Kind: "network_denied", Target: "evil.example:443" + s}},
		"result with sandbox": {Kind: protocol.KindResult, Final: &protocol.Result{
			SessionID: "s3", Status: protocol.StatusSuccess, Sandbox: &protocol.Sandbox{Level: "off", Layers: []string{}}}},
		"mcp tool call": {Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "mcp__gh__search" + s, ID: "toolu_03",
			Input: `{"q":` + string(quoted) + `}`, Server: "gh" + s}},
		"mcp tool result": {Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: "toolu_03",
			Name: "mcp__gh__search", Content: s, IsError: true, Server: "gh" + s}},
		"mcp status": {Kind: protocol.KindMCPStatus, MCP: &protocol.MCPServer{Name: "gh" + s, Transport: "stdio",
			Status: protocol.MCPTimeout, Reason: "no answer to initialize within 30s" + s, Required: true}},
		"mcp status restarted": {Kind: protocol.KindMCPStatus, MCP: &protocol.MCPServer{Name: "db", Transport: "http",
			Status: protocol.MCPRestarted, ToolCount: 12, Restarts: 1}},
		"session start with mcp": {Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{
			SessionID: "s4", Tools: []string{"Read", "mcp__gh__search"}, TS: "2026-05-06T12:00:00.000Z",
			MCPServers: []protocol.MCPServer{{Name: "gh" + s, Transport: "stdio", Status: protocol.MCPConnected, ToolCount: 1},
				{Name: "db", Transport: "http", Status: protocol.MCPNeedsAuth, Reason: s}}}},
		"result with mcp": {Kind: protocol.KindResult, Final: &protocol.Result{
			SessionID: "s5", Status: protocol.StatusMCP, IsError: true, Error: &protocol.Error{Kind: protocol.ErrMCP, Message: s},
			MCPServers: []protocol.MCPServer{{Name: "gh", Transport: "stdio", Status: protocol.MCPFailed, Reason: s, Required: true}}}},
	}
}

// trickyStrings are field values that have broken codecs: framing bytes, invalid
// UTF-8, JSON-significant and JavaScript-significant characters.
var trickyStrings = map[string]string{
	"empty":        "",
	"plain":        "hello",
	"CRLF":         "a\r\nb\r\n",
	"framing":      "*2\r\n$4\r\nTEXT\r\n$1\r\nx\r\n",
	"NUL":          "\x00\x00a\x00",
	"invalid UTF8": "ok \xff\xfe \xc3 end",
	"controls":     "\x01\x1b[31mred\x7f\t",
	"JSON":         `{"a":"b\"c\\"}`,
	"separators":   "line\u2028para\u2029end",
	"multibyte":    "héllo 世界 🎉",
}

// equalMessage asserts that got is want, comparing tool inputs and structured outputs
// that are JSON by meaning.
func equalMessage(t *testing.T, want, got protocol.Message, msgAndArgs ...any) {
	t.Helper()
	want, got = jsonFieldsByMeaning(t, want, got)
	assert.Equal(t, want, got, msgAndArgs...)
}

func jsonFieldsByMeaning(t *testing.T, want, got protocol.Message) (protocol.Message, protocol.Message) {
	t.Helper()
	if json.Valid([]byte(want.Call.Input)) && json.Valid([]byte(got.Call.Input)) {
		assert.JSONEq(t, want.Call.Input, got.Call.Input)
		want.Call.Input, got.Call.Input = "", ""
	}
	if want.Final != nil && got.Final != nil && want.Final.StructuredOutput != nil && got.Final.StructuredOutput != nil {
		assert.JSONEq(t, string(want.Final.StructuredOutput), string(got.Final.StructuredOutput))
		w, g := *want.Final, *got.Final
		w.StructuredOutput, g.StructuredOutput = nil, nil
		want.Final, got.Final = &w, &g
	}
	return want, got
}

// decodeAll decodes every frame of b through reader wrap and returns the messages and
// the decoder's error.
func decodeAll(t *testing.T, d *protocol.RESPDecoder) ([]protocol.Message, error) {
	t.Helper()
	var out []protocol.Message
	for d.Next() {
		out = append(out, d.Message())
	}
	assert.False(t, d.Next(), "Next after the end")
	return out, d.Err()
}

func encodeAll(t testing.TB, msgs ...protocol.Message) []byte {
	t.Helper()
	var buf []byte
	for _, m := range msgs {
		var err error
		buf, err = protocol.AppendRESP(buf, m)
		require.NoError(t, err)
	}
	return buf
}

// firstKey returns the first key of the JSON object in line.
func firstKey(t *testing.T, line []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	tok, err = dec.Token()
	require.NoError(t, err)
	key, ok := tok.(string)
	require.True(t, ok, "first token %v is not a key", tok)
	return key
}

package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/transporttest"
)

var editSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)

// toolLoop is a conversation in the middle of a tool-use loop with thinking on.
var toolLoop = []protocol.Turn{
	protocol.UserText("Save the café menu."),
	{Role: protocol.RoleAssistant, Blocks: []protocol.Block{
		{Type: protocol.BlockThinking, Text: "The user wants the café menu saved.", Signature: "ErUBCkYICxgCIkBm3Yq8"},
		{Type: protocol.BlockRedactedThinking, Data: "EmwKAhgBEgy3va3pzix"},
		{Type: protocol.BlockText, Text: "Saving the menu now."},
		{Type: protocol.BlockText, Text: ""},
		{Type: protocol.BlockToolUse, ID: "toolu_01JmR5xWq8TzK2vNc7YbL4sD", Name: "write_file",
			Input: json.RawMessage(`{"path":"menu/café.md","content":"# Menu\nCrème brûlée — 6 €"}`)},
	}},
	{Role: protocol.RoleUser, Blocks: []protocol.Block{
		{Type: protocol.BlockToolResult, ToolUseID: "toolu_01JmR5xWq8TzK2vNc7YbL4sD", Content: "wrote 34 bytes"},
		{Type: protocol.BlockText, Text: "Thanks, now list the folder."},
	}},
}

func TestRequestBody(t *testing.T) {
	tests := map[string]protocol.Request{
		"minimal": {Model: "claude-sonnet-4-5", MaxTokens: 256,
			Messages: []protocol.Turn{protocol.UserText("One line on Go channels")}},
		"tool_loop_thinking_enabled": {Model: "claude-sonnet-4-5", MaxTokens: 4096, System: "You are a coding agent.",
			Tools: []protocol.ToolSpec{
				{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
				{Name: "write_file", Description: "Write a file.", InputSchema: editSchema},
			},
			Thinking: protocol.Thinking{Mode: "enabled", Budget: 2048},
			Messages: toolLoop},
		"adaptive_effort_tool_result_last": {Model: "claude-opus-4-6", MaxTokens: 32000, System: "sys",
			Tools:    []protocol.ToolSpec{{Name: "list", Description: "List files."}},
			Thinking: protocol.Thinking{Mode: "adaptive", Effort: "high"},
			Messages: append(toolLoop[:2:2], protocol.Turn{Role: protocol.RoleUser, Blocks: []protocol.Block{
				{Type: protocol.BlockToolResult, ToolUseID: "toolu_01JmR5xWq8TzK2vNc7YbL4sD", Content: "permission denied", IsError: true},
			}})},
		"thinking_disabled": {Model: "claude-haiku-4-5", MaxTokens: 1024, Thinking: protocol.Thinking{Mode: "disabled"},
			Messages: []protocol.Turn{protocol.UserText("Summarise.")}},
		"enabled_without_budget": {Model: "claude-sonnet-4-5", MaxTokens: 8192, Thinking: protocol.Thinking{Mode: "enabled"},
			Messages: []protocol.Turn{protocol.UserText("Think.")}},
		"empty_turns_dropped_thinking_last": {Model: "claude-sonnet-4-5", MaxTokens: 512, Messages: []protocol.Turn{
			protocol.UserText("Go on."),
			{Role: protocol.RoleAssistant, Blocks: []protocol.Block{{Type: protocol.BlockText}}},
			protocol.UserText(""),
			{Role: protocol.RoleUser, Blocks: []protocol.Block{{Type: protocol.BlockText, Text: "Still there?"}, {Type: protocol.BlockText}}},
			{Role: protocol.RoleAssistant, Blocks: []protocol.Block{
				{Type: protocol.BlockText, Text: "Yes."},
				{Type: protocol.BlockThinking, Text: "", Signature: "EqQBCgIYAhIM"},
			}},
		}},
	}
	d := anthropic.New(anthropic.Config{APIKey: "sk-ant-test"})
	for name, req := range tests {
		t.Run(name, func(t *testing.T) {
			hreq, err := d.NewRequest(context.Background(), req)
			require.NoError(t, err)
			body, err := io.ReadAll(hreq.Body)
			require.NoError(t, err)
			require.True(t, json.Valid(body))

			transporttest.AssertGoldenJSON(t, filepath.Join("testdata", "TestRequestBody", name+".json"), body, *update)

			assert.LessOrEqual(t, strings.Count(string(body), `"cache_control"`), 4, "at most four cache breakpoints")
			assert.NotContains(t, string(body), `{"type":"text","text":""}`, "no empty text blocks")
		})
	}
}

func TestRequestBreakpoints(t *testing.T) {
	d := anthropic.New(anthropic.Config{})
	req := protocol.Request{Model: "m", MaxTokens: 10, System: "s", SystemTail: "workspace: /w",
		Tools:    []protocol.ToolSpec{{Name: "a", InputSchema: editSchema}, {Name: "b", InputSchema: editSchema}},
		Messages: toolLoop}
	hreq, err := d.NewRequest(context.Background(), req)
	require.NoError(t, err)
	var body struct {
		System []struct {
			Text         string
			CacheControl *struct{ Type string } `json:"cache_control"`
		} `json:"system"`
		Tools []struct {
			CacheControl *struct{ Type string } `json:"cache_control"`
		} `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.NewDecoder(hreq.Body).Decode(&body))
	require.Len(t, body.System, 2)
	require.NotNil(t, body.System[0].CacheControl)
	assert.Equal(t, "ephemeral", body.System[0].CacheControl.Type)
	assert.Equal(t, "workspace: /w", body.System[1].Text)
	assert.Nil(t, body.System[1].CacheControl, "the session's own tail comes after the breakpoint")
	require.Len(t, body.Tools, 2)
	assert.Nil(t, body.Tools[0].CacheControl)
	assert.NotNil(t, body.Tools[1].CacheControl, "the last tool")
	require.Len(t, body.Messages, 3)
	var last []struct {
		CacheControl *struct{ Type string } `json:"cache_control"`
	}
	require.NoError(t, json.Unmarshal(body.Messages[2].Content, &last))
	require.Len(t, last, 2)
	assert.Nil(t, last[0].CacheControl)
	assert.NotNil(t, last[1].CacheControl, "the last block of the last message")
	for _, m := range body.Messages[:2] {
		assert.NotContains(t, string(m.Content), "cache_control", "no breakpoint in earlier messages")
	}
}

func TestNewRequestHeaders(t *testing.T) {
	tests := map[string]struct {
		give       anthropic.Config
		wantURL    string
		wantHeader map[string]string
	}{
		"defaults": {
			give:    anthropic.Config{APIKey: "sk-ant-1"},
			wantURL: "https://api.anthropic.com/v1/messages",
			wantHeader: map[string]string{"X-Api-Key": "sk-ant-1", "Anthropic-Version": "2023-06-01",
				"Content-Type": "application/json", "User-Agent": "agentrun", "Anthropic-Beta": ""},
		},
		"keyless local server with betas": {
			give: anthropic.Config{BaseURL: "http://127.0.0.1:8089/v1/", Version: "2024-01-01",
				Beta: []string{"interleaved-thinking-2025-05-14", "context-1m-2025-08-07"}},
			wantURL: "http://127.0.0.1:8089/v1/messages",
			wantHeader: map[string]string{"X-Api-Key": "", "Anthropic-Version": "2024-01-01",
				"Anthropic-Beta": "interleaved-thinking-2025-05-14,context-1m-2025-08-07"},
		},
		"extra headers replace the dialect's": {
			give: anthropic.Config{BaseURL: "https://api.deepseek.com/anthropic",
				Headers: map[string]string{"Authorization": "Bearer tok", "User-Agent": "agentrun/ci"}},
			wantURL:    "https://api.deepseek.com/anthropic/messages",
			wantHeader: map[string]string{"Authorization": "Bearer tok", "User-Agent": "agentrun/ci", "X-Api-Key": ""},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			hreq, err := anthropic.New(tt.give).NewRequest(context.Background(),
				protocol.Request{Model: "m", MaxTokens: 1, Messages: []protocol.Turn{protocol.UserText("x")}})
			require.NoError(t, err)
			assert.Equal(t, http.MethodPost, hreq.Method)
			assert.Equal(t, tt.wantURL, hreq.URL.String())
			for k, v := range tt.wantHeader {
				assert.Equal(t, v, hreq.Header.Get(k), k)
			}
			if tt.give.APIKey == "" {
				assert.NotContains(t, hreq.Header, "X-Api-Key")
			}
		})
	}
}

func TestNewRequestUnknownThinkingMode(t *testing.T) {
	_, err := anthropic.New(anthropic.Config{}).NewRequest(context.Background(),
		protocol.Request{Model: "m", MaxTokens: 1, Thinking: protocol.Thinking{Mode: "sometimes"}})
	assert.ErrorContains(t, err, `unknown thinking mode "sometimes"`)
}

func TestErrorMessage(t *testing.T) {
	tests := map[string]struct {
		give             string
		wantMsg, wantTyp string
	}{
		"full": {
			give:    `{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests exceeded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
			wantMsg: "rate_limit_error: Number of requests exceeded (request_id req_011CSHoEeqs5C35K2UUqR7Fy)",
			wantTyp: "rate_limit_error",
		},
		"no request id": {
			give:    `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			wantMsg: "overloaded_error: Overloaded", wantTyp: "overloaded_error",
		},
		"type only": {
			give:    `{"type":"error","error":{"type":"api_error"}}`,
			wantMsg: "api_error", wantTyp: "api_error",
		},
		"another shape": {give: `{"error":"plain string"}`},
		"not JSON":      {give: `<html>502 Bad Gateway</html>`},
		"empty":         {give: ``},
	}
	d := anthropic.New(anthropic.Config{})
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			msg, typ := d.ErrorMessage([]byte(tt.give))
			assert.Equal(t, tt.wantMsg, msg)
			assert.Equal(t, tt.wantTyp, typ)
		})
	}
}

package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/openai"
	"github.com/agentrun/agentrun/transport/transporttest"
)

var (
	readFileSpec = protocol.ToolSpec{Name: "read_file", Description: "Read a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}
	noSchemaSpec = protocol.ToolSpec{Name: "list_todos"}
)

// TestNewRequest compares request bodies with testdata/TestNewRequest/<case>.json.
func TestNewRequest(t *testing.T) {
	tests := []struct {
		name string
		cfg  openai.Config
		give protocol.Request
	}{
		{
			name: "system_and_text",
			cfg:  openai.Config{APIKey: "sk-test"},
			give: protocol.Request{Model: "gpt-4.1", System: "You are a coding agent.", MaxTokens: 1024,
				Messages: []protocol.Turn{protocol.UserText("Find TODOs")}},
		},
		{
			name: "several_tool_results",
			cfg:  openai.Config{BaseURL: "http://127.0.0.1:11434/v1"},
			give: protocol.Request{Model: "qwen3:8b", MaxTokens: 2048, Tools: []protocol.ToolSpec{readFileSpec, noSchemaSpec},
				Messages: []protocol.Turn{
					protocol.UserText("Show main.go and the TODOs"),
					{Role: protocol.RoleAssistant, Blocks: []protocol.Block{
						{Type: protocol.BlockText, Text: "Reading both."},
						{Type: protocol.BlockToolUse, ID: "call_1", Name: "read_file", Input: json.RawMessage(`{"path":"cmd/main.go"}`)},
						{Type: protocol.BlockToolUse, ID: "call_2", Name: "list_todos"},
						{Type: protocol.BlockToolUse, ID: "call_3", Name: "read_file", Input: json.RawMessage(`{"path":"nope.go"}`)},
					}},
					{Role: protocol.RoleUser, Blocks: []protocol.Block{
						{Type: protocol.BlockToolResult, ToolUseID: "call_1", Content: "package main\n"},
						{Type: protocol.BlockToolResult, ToolUseID: "call_2", Content: "internal/a.go:12: // TODO"},
						{Type: protocol.BlockToolResult, ToolUseID: "call_3", Content: "no such file", IsError: true},
						{Type: protocol.BlockText, Text: "Now summarise."},
					}},
				}},
		},
		{
			name: "tool_calls_only",
			cfg:  openai.Config{BaseURL: "https://openrouter.ai/api/v1/", Headers: map[string]string{"HTTP-Referer": "https://example.test"}},
			give: protocol.Request{Model: "anthropic/claude-sonnet-4.5", Tools: []protocol.ToolSpec{readFileSpec},
				Messages: []protocol.Turn{
					protocol.UserText("Read go.mod"),
					{Role: protocol.RoleAssistant, Blocks: []protocol.Block{
						{Type: protocol.BlockThinking, Text: "Need the module path.", Signature: "sig"},
						{Type: protocol.BlockText, Text: ""},
						{Type: protocol.BlockToolUse, ID: "call_9", Name: "read_file", Input: json.RawMessage(`{"path":"go.mod"}`)},
					}},
					{Role: protocol.RoleUser, Blocks: []protocol.Block{
						{Type: protocol.BlockToolResult, ToolUseID: "call_9", Content: "module example.test\n"},
					}},
				}},
		},
		{
			name: "thinking_echo_reasoning",
			cfg:  openai.Config{BaseURL: "https://api.deepseek.com", EchoReasoning: true},
			give: protocol.Request{Model: "deepseek-v4-pro", System: "Be brief.", MaxTokens: 8192,
				Thinking: protocol.Thinking{Mode: "enabled", Budget: 4096},
				Tools:    []protocol.ToolSpec{readFileSpec},
				Messages: []protocol.Turn{
					protocol.UserText("What is in go.mod?"),
					{Role: protocol.RoleAssistant, Blocks: []protocol.Block{
						{Type: protocol.BlockThinking, Text: "I should read go.mod."},
						{Type: protocol.BlockToolUse, ID: "call_a", Name: "read_file", Input: json.RawMessage(`{"path":"go.mod"}`)},
					}},
					{Role: protocol.RoleUser, Blocks: []protocol.Block{
						{Type: protocol.BlockToolResult, ToolUseID: "call_a", Content: "module x\n"},
					}},
					{Role: protocol.RoleAssistant, Blocks: []protocol.Block{
						{Type: protocol.BlockThinking, Text: "Answer now."},
						{Type: protocol.BlockText, Text: "It declares module x."},
					}},
					protocol.UserText("Thanks"),
				}},
		},
		{
			name: "adaptive_effort_no_echo",
			cfg:  openai.Config{BaseURL: "https://api.openai.com/v1", APIKey: "sk-test"},
			give: protocol.Request{Model: "o4-mini", MaxTokens: 4000,
				Thinking: protocol.Thinking{Mode: "adaptive", Effort: "medium"},
				Messages: []protocol.Turn{
					protocol.UserText("Plan the refactor"),
					{Role: protocol.RoleAssistant, Blocks: []protocol.Block{
						{Type: protocol.BlockThinking, Text: "hidden"},
						{Type: protocol.BlockToolUse, ID: "call_b", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)},
					}},
					{Role: protocol.RoleUser, Blocks: []protocol.Block{
						{Type: protocol.BlockToolResult, ToolUseID: "call_b", Content: ""},
					}},
				}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hreq, err := openai.New(tt.cfg).NewRequest(context.Background(), tt.give)
			require.NoError(t, err)
			got, err := io.ReadAll(hreq.Body)
			require.NoError(t, err)

			transporttest.AssertGoldenJSON(t, filepath.Join("testdata", "TestNewRequest", tt.name+".json"), got, *update)
		})
	}
}

func TestNewRequestHTTP(t *testing.T) {
	tests := map[string]struct {
		give       openai.Config
		wantURL    string
		wantAuth   string
		wantHeader map[string]string
		wantField  string
	}{
		"defaults": {
			give:      openai.Config{APIKey: "sk-abc"},
			wantURL:   "https://api.openai.com/v1/chat/completions",
			wantAuth:  "Bearer sk-abc",
			wantField: "max_completion_tokens",
		},
		"trailing slash and no key": {
			give:      openai.Config{BaseURL: "http://localhost:11434/v1/"},
			wantURL:   "http://localhost:11434/v1/chat/completions",
			wantField: "max_tokens",
		},
		"openai host with explicit field": {
			give:      openai.Config{BaseURL: "https://API.openai.com/v1", MaxTokensField: openai.MaxTokens},
			wantURL:   "https://API.openai.com/v1/chat/completions",
			wantField: "max_tokens",
		},
		"local server asking for the new field": {
			give:      openai.Config{BaseURL: "http://vllm:8000/v1", MaxTokensField: openai.MaxCompletionTokens},
			wantURL:   "http://vllm:8000/v1/chat/completions",
			wantField: "max_completion_tokens",
		},
		"extra headers": {
			give: openai.Config{BaseURL: "https://openrouter.ai/api/v1", APIKey: "or-key",
				Headers: map[string]string{"X-Title": "agentrun", "HTTP-Referer": "https://example.test"}},
			wantURL:    "https://openrouter.ai/api/v1/chat/completions",
			wantAuth:   "Bearer or-key",
			wantHeader: map[string]string{"X-Title": "agentrun", "Http-Referer": "https://example.test"},
			wantField:  "max_tokens",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			hreq, err := openai.New(tt.give).NewRequest(context.Background(),
				protocol.Request{Model: "m", MaxTokens: 77, Messages: []protocol.Turn{protocol.UserText("hi")}})
			require.NoError(t, err)
			assert.Equal(t, http.MethodPost, hreq.Method)
			assert.Equal(t, tt.wantURL, hreq.URL.String())
			assert.Equal(t, tt.wantAuth, hreq.Header.Get("Authorization"))
			assert.Equal(t, "application/json", hreq.Header.Get("Content-Type"))
			for k, v := range tt.wantHeader {
				assert.Equal(t, v, hreq.Header.Get(k), k)
			}
			var body map[string]json.RawMessage
			b, err := io.ReadAll(hreq.Body)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &body))
			assert.JSONEq(t, "77", string(body[tt.wantField]))
			assert.Len(t, body, 5, "model, messages, stream, stream_options and the limit: %s", b)
		})
	}
}

func TestNewRequestErrors(t *testing.T) {
	tests := map[string]struct {
		cfg  openai.Config
		give protocol.Request
	}{
		"unknown max tokens field": {
			cfg:  openai.Config{MaxTokensField: "max_output_tokens"},
			give: protocol.Request{Model: "m", MaxTokens: 10, Messages: []protocol.Turn{protocol.UserText("hi")}},
		},
		"invalid role": {
			give: protocol.Request{Model: "m", Messages: []protocol.Turn{{Role: 9}}},
		},
		"invalid schema": {
			give: protocol.Request{Model: "m", Messages: []protocol.Turn{protocol.UserText("hi")},
				Tools: []protocol.ToolSpec{{Name: "x", InputSchema: json.RawMessage(`{not json`)}}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := openai.New(tt.cfg).NewRequest(context.Background(), tt.give)
			assert.Error(t, err)
		})
	}
}

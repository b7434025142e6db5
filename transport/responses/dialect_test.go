package responses_test

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
	"github.com/agentrun/agentrun/transport/responses"
	"github.com/agentrun/agentrun/transport/transporttest"
)

var readFileSpec = protocol.ToolSpec{Name: "read_file", Description: "Read a file.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}

// TestNewRequest compares request bodies with testdata/TestNewRequest/<case>.json.
func TestNewRequest(t *testing.T) {
	tests := []struct {
		name string
		give protocol.Request
	}{
		{
			name: "system_and_text",
			give: protocol.Request{Model: "gpt-5.4", System: "You are a coding agent.", MaxTokens: 1024,
				Messages: []protocol.Turn{protocol.UserText("Find TODOs")}},
		},
		{
			name: "several_tool_results",
			give: protocol.Request{Model: "gpt-5.4", MaxTokens: 2048,
				Tools: []protocol.ToolSpec{readFileSpec, {Name: "list_todos", Description: "List TODO comments."}},
				Messages: []protocol.Turn{
					protocol.UserText("Show main.go and the TODOs"),
					{Role: protocol.RoleAssistant, Blocks: []protocol.Block{
						{Type: protocol.BlockThinking, Text: "Two reads.", Signature: "sig"},
						{Type: protocol.BlockText, Text: "Reading both."},
						{Type: protocol.BlockToolUse, ID: "call_1", Name: "read_file", Input: json.RawMessage(`{"path":"cmd/main.go"}`)},
						{Type: protocol.BlockToolUse, ID: "call_2", Name: "list_todos"},
						{Type: protocol.BlockToolUse, ID: "call_3", Name: "read_file", Input: json.RawMessage(`{"path":"nope.go"}`)},
					}},
					{Role: protocol.RoleUser, Blocks: []protocol.Block{
						{Type: protocol.BlockToolResult, ToolUseID: "call_1", Content: "package main\n"},
						{Type: protocol.BlockToolResult, ToolUseID: "call_2", Content: ""},
						{Type: protocol.BlockToolResult, ToolUseID: "call_3", Content: "no such file", IsError: true},
						{Type: protocol.BlockText, Text: "Now summarise."},
					}},
					{Role: protocol.RoleAssistant, Blocks: []protocol.Block{
						{Type: protocol.BlockText, Text: "main.go is empty; one TODO."},
					}},
				}},
		},
		{
			name: "thinking_default_effort",
			give: protocol.Request{Model: "o4-mini", MaxTokens: 8000, Thinking: protocol.Thinking{Mode: "enabled", Budget: 2048},
				Messages: []protocol.Turn{protocol.UserText("Plan it")}},
		},
		{
			name: "thinking_adaptive_effort",
			give: protocol.Request{Model: "gpt-5.4", Thinking: protocol.Thinking{Mode: "adaptive", Effort: "low"},
				Messages: []protocol.Turn{protocol.UserText("Plan it")}},
		},
		{
			name: "thinking_disabled",
			give: protocol.Request{Model: "gpt-5.4", Thinking: protocol.Thinking{Mode: "disabled", Effort: "low"},
				Messages: []protocol.Turn{protocol.UserText("Plan it")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hreq, err := responses.New(responses.Config{}).NewRequest(context.Background(), tt.give)
			require.NoError(t, err)
			got, err := io.ReadAll(hreq.Body)
			require.NoError(t, err)

			transporttest.AssertGoldenJSON(t, filepath.Join("testdata", "TestNewRequest", tt.name+".json"), got, *update)
		})
	}
}

func TestNewRequestHTTP(t *testing.T) {
	tests := map[string]struct {
		give       responses.Config
		wantURL    string
		wantAuth   string
		wantHeader map[string]string
	}{
		"defaults": {
			give:     responses.Config{APIKey: "sk-abc"},
			wantURL:  "https://api.openai.com/v1/responses",
			wantAuth: "Bearer sk-abc",
		},
		"trailing slash and no key": {
			give:    responses.Config{BaseURL: "http://localhost:11434/v1/"},
			wantURL: "http://localhost:11434/v1/responses",
		},
		"extra headers": {
			give:       responses.Config{BaseURL: "https://gw.example.test/v1", APIKey: "k", Headers: map[string]string{"OpenAI-Project": "proj_1"}},
			wantURL:    "https://gw.example.test/v1/responses",
			wantAuth:   "Bearer k",
			wantHeader: map[string]string{"OpenAI-Project": "proj_1"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			hreq, err := responses.New(tt.give).NewRequest(context.Background(),
				protocol.Request{Model: "m", Messages: []protocol.Turn{protocol.UserText("hi")}})
			require.NoError(t, err)
			assert.Equal(t, http.MethodPost, hreq.Method)
			assert.Equal(t, tt.wantURL, hreq.URL.String())
			assert.Equal(t, tt.wantAuth, hreq.Header.Get("Authorization"))
			assert.Equal(t, "application/json", hreq.Header.Get("Content-Type"))
			for k, v := range tt.wantHeader {
				assert.Equal(t, v, hreq.Header.Get(k), k)
			}
		})
	}
}

func TestNewRequestErrors(t *testing.T) {
	tests := map[string]protocol.Request{
		"invalid role":   {Model: "m", Messages: []protocol.Turn{{Role: 7}}},
		"invalid schema": {Model: "m", Tools: []protocol.ToolSpec{{Name: "x", InputSchema: json.RawMessage(`[`)}}},
	}
	for name, give := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := responses.New(responses.Config{}).NewRequest(context.Background(), give)
			assert.Error(t, err)
		})
	}
}

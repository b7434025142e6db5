package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
)

func TestTurnJSONRoundTrip(t *testing.T) {
	tests := map[string]struct {
		give protocol.Turn
		want string // the Claude Messages form
	}{
		"user text": {
			give: protocol.UserText("Run go vet\nand fix it"),
			want: `{"role":"user","content":"Run go vet\nand fix it"}`,
		},
		"empty user text": {
			give: protocol.UserText(""),
			want: `{"role":"user","content":""}`,
		},
		"user blocks": {
			give: protocol.Turn{Role: protocol.RoleUser, Blocks: []protocol.Block{
				{Type: protocol.BlockText, Text: "a"}, {Type: protocol.BlockText, Text: "b"},
			}},
			want: `{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
		},
		"tool results": {
			give: protocol.Turn{Role: protocol.RoleUser, Blocks: []protocol.Block{
				{Type: protocol.BlockToolResult, ToolUseID: "toolu_1", Content: "ok\n<html> & \"q\""},
				{Type: protocol.BlockToolResult, ToolUseID: "toolu_2", Content: "", IsError: true},
			}},
			want: `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok\n<html> & \"q\""},{"type":"tool_result","tool_use_id":"toolu_2","content":"","is_error":true}]}`,
		},
		"assistant": {
			give: protocol.Turn{Role: protocol.RoleAssistant, Blocks: []protocol.Block{
				{Type: protocol.BlockThinking, Text: "Let me check", Signature: "EqQB"},
				{Type: protocol.BlockRedactedThinking, Data: "opaque=="},
				{Type: protocol.BlockText, Text: ""},
				{Type: protocol.BlockToolUse, ID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command": "go vet ./...", "timeout": 60}`)},
			}},
			want: `{"role":"assistant","content":[{"type":"thinking","thinking":"Let me check","signature":"EqQB"},{"type":"redacted_thinking","data":"opaque=="},{"type":"text","text":""},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"go vet ./...","timeout":60}}]}`,
		},
		"assistant single text": {
			give: protocol.Turn{Role: protocol.RoleAssistant, Blocks: []protocol.Block{{Type: protocol.BlockText, Text: "done"}}},
			want: `{"role":"assistant","content":[{"type":"text","text":"done"}]}`,
		},
		"thinking without signature": {
			give: protocol.Turn{Role: protocol.RoleAssistant, Blocks: []protocol.Block{{Type: protocol.BlockThinking, Text: "hm"}}},
			want: `{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":""}]}`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(tt.give)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))

			var got protocol.Turn
			require.NoError(t, json.Unmarshal(b, &got))
			assertTurnEqual(t, tt.give, got)
		})
	}
}

// assertTurnEqual compares turns, tool inputs by JSON meaning.
func assertTurnEqual(t *testing.T, want, got protocol.Turn) {
	t.Helper()
	require.Len(t, got.Blocks, len(want.Blocks))
	assert.Equal(t, want.Role, got.Role)
	for i := range want.Blocks {
		w, g := want.Blocks[i], got.Blocks[i]
		if w.Input != nil || g.Input != nil {
			assert.JSONEq(t, string(w.Input), string(g.Input), "block %d input", i)
			w.Input, g.Input = nil, nil
		}
		assert.Equal(t, w, g, "block %d", i)
	}
}

func TestTurnUnmarshalClaudeForms(t *testing.T) {
	tests := map[string]struct {
		give string
		want protocol.Turn
	}{
		"tool result content as blocks": {
			give: `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`,
			want: protocol.Turn{Role: protocol.RoleUser, Blocks: []protocol.Block{{Type: protocol.BlockToolResult, ToolUseID: "t", Content: "a\nb"}}},
		},
		"tool use without input": {
			give: `{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"PlanClear","input":{}}]}`,
			want: protocol.Turn{Role: protocol.RoleAssistant, Blocks: []protocol.Block{{Type: protocol.BlockToolUse, ID: "t", Name: "PlanClear", Input: json.RawMessage(`{}`)}}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var got protocol.Turn
			require.NoError(t, json.Unmarshal([]byte(tt.give), &got))
			assertTurnEqual(t, tt.want, got)
		})
	}
}

func TestTurnJSONErrors(t *testing.T) {
	marshal := map[string]protocol.Turn{
		"no role":       {Blocks: []protocol.Block{{Type: protocol.BlockText}}},
		"no block type": {Role: protocol.RoleAssistant, Blocks: []protocol.Block{{Text: "x"}}},
	}
	for name, give := range marshal {
		t.Run("marshal "+name, func(t *testing.T) {
			_, err := json.Marshal(give)
			assert.Error(t, err)
		})
	}
	unmarshal := map[string]string{
		"unknown role":       `{"role":"system","content":"x"}`,
		"unknown block":      `{"role":"user","content":[{"type":"image"}]}`,
		"content not a list": `{"role":"user","content":5}`,
		"bad result content": `{"role":"user","content":[{"type":"tool_result","content":5}]}`,
	}
	for name, give := range unmarshal {
		t.Run("unmarshal "+name, func(t *testing.T) {
			var got protocol.Turn
			assert.Error(t, json.Unmarshal([]byte(give), &got))
		})
	}
}

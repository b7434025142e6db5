package scripted_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/scripted"
)

// demoContent is the AGENTRUN_DEMO.md the demo policy writes for the task "Add a
// greeting to main.go".
const demoContent = "# agentrun demo\n\nTask:\n\n> Add a greeting to main.go\n\nThis file was written by " +
	"agentrun's built-in scripted model, the demo policy that answers when no API key is configured. " +
	"Set ANTHROPIC_API_KEY or OPENAI_API_KEY to use a real model.\n"

func TestDemoPolicy(t *testing.T) {
	write := protocol.ToolCall{Name: "Write", Input: jsonObject(t, "path", "AGENTRUN_DEMO.md", "content", demoContent)}
	tests := map[string]struct {
		tools     []string
		wantCalls []protocol.ToolCall // one per step, ids left out
		wantText  string
	}{
		"every tool": {
			tools: []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep"},
			wantCalls: []protocol.ToolCall{{Name: "Glob", Input: `{"pattern":"**/*"}`}, write,
				{Name: "Bash", Input: `{"command":"cat AGENTRUN_DEMO.md"}`}},
			wantText: "I listed the workspace, wrote AGENTRUN_DEMO.md and checked it with cat.\n" +
				"Files seen: README.md, main.go, pkg/util.go, AGENTRUN_DEMO.md.",
		},
		"bash and write": {
			tools: []string{"Bash", "Write"},
			wantCalls: []protocol.ToolCall{{Name: "Bash", Input: `{"command":"ls -la"}`}, write,
				{Name: "Bash", Input: `{"command":"cat AGENTRUN_DEMO.md"}`}},
			wantText: "I listed the workspace, wrote AGENTRUN_DEMO.md and checked it with cat.\n" +
				"Files seen: README.md, main.go, pkg/util.go, AGENTRUN_DEMO.md.",
		},
		"read and write": {
			tools:     []string{"Write", "Read"},
			wantCalls: []protocol.ToolCall{{Name: "Read", Input: `{"path":"README.md"}`}, write, {Name: "Read", Input: `{"path":"AGENTRUN_DEMO.md"}`}},
			wantText:  "I read README.md, wrote AGENTRUN_DEMO.md and read it back.\nFiles seen: main.go, pkg/util.go, AGENTRUN_DEMO.md.",
		},
		"read only": {
			tools:     []string{"Read"},
			wantCalls: []protocol.ToolCall{{Name: "Read", Input: `{"path":"README.md"}`}},
			wantText:  "I read README.md.\nFiles seen: main.go, pkg/util.go.",
		},
		"write only": {
			tools:     []string{"Write"},
			wantCalls: []protocol.ToolCall{write},
			wantText:  "I wrote AGENTRUN_DEMO.md.\nFiles seen: AGENTRUN_DEMO.md.",
		},
		"no tools": {
			wantText: "No tools were offered, so I only answer in text.",
		},
		"unknown tools": {
			tools:    []string{"WebSearch"},
			wantText: "No tools were offered, so I only answer in text.",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := scripted.New(scripted.Options{})
			req := protocol.Request{Model: "demo", Messages: []protocol.Turn{user("  Add a greeting to main.go\n")}}
			for _, n := range tt.tools {
				req.Tools = append(req.Tools, protocol.ToolSpec{Name: n, InputSchema: []byte(`{"type":"object"}`)})
			}
			var gotCalls []protocol.ToolCall
			for step := 0; ; step++ {
				require.Less(t, step, 10, "the demo policy must finish")
				got := collect(m.Stream(t.Context(), req))
				require.GreaterOrEqual(t, len(got), 2)
				if step == 0 {
					require.Equal(t, protocol.KindThinking, got[0].Kind, "the first step thinks")
					assert.True(t, strings.HasPrefix(got[0].Text, "The task is: "), got[0].Text)
				} else {
					assert.NotEqual(t, protocol.KindThinking, got[0].Kind)
				}
				cs := calls(got)
				if len(cs) == 0 {
					assert.Equal(t, stop("end_turn"), last(got))
					full := textOf(got)
					assert.True(t, strings.HasPrefix(full, "This is agentrun's built-in demo model (no API key is configured). "+
						"You asked: Add a greeting to main.go\n"), full)
					assert.True(t, strings.HasSuffix(full, tt.wantText), full)
					break
				}
				require.Len(t, cs, 1)
				assert.Equal(t, stop("tool_use"), last(got))
				assert.Equal(t, "tc_"+itoa(step)+"_0", cs[0].ID)
				gotCalls = append(gotCalls, protocol.ToolCall{Name: cs[0].Name, Input: cs[0].Input})
				req.Messages = append(req.Messages, assistantTurn(got), results(got, demoTool))
			}
			assert.Equal(t, tt.wantCalls, gotCalls)
		})
	}
}

// demoTool plays the tools the demo policy calls.
func demoTool(c protocol.ToolCall) string {
	switch {
	case c.Name == "Glob", strings.Contains(c.Input, "ls -la"):
		return "README.md\nmain.go\npkg/util.go\n"
	case strings.Contains(c.Input, `"README.md"`):
		return "# Demo\nSee main.go and pkg/util.go."
	case c.Name == "Write":
		return "OK: wrote 250 bytes to AGENTRUN_DEMO.md"
	}
	return "# agentrun demo\n"
}

func TestDemoPolicyLongTask(t *testing.T) {
	m := scripted.New(scripted.Options{})
	task := strings.Repeat("é", 300)
	got := collect(m.Stream(t.Context(), protocol.Request{Messages: []protocol.Turn{user(task)},
		Tools: []protocol.ToolSpec{{Name: "Write"}}}))
	cs := calls(got)
	require.Len(t, cs, 1)
	assert.Contains(t, cs[0].Input, "> "+strings.Repeat("é", 200)+"…", "the task is clipped to 200 runes")
}

func jsonObject(t *testing.T, kv ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(quote(kv[i]) + ":" + quote(kv[i+1]))
	}
	b.WriteString("}")
	return b.String()
}

package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/protocol"
)

// serverTools is a function-field fake of agent.ServerTools with one tool.
type serverTools struct {
	call func(ctx context.Context, tool string, input json.RawMessage) tools.Result
}

func (serverTools) Specs() []protocol.ToolSpec {
	return []protocol.ToolSpec{{Name: "mcp__gh__search", Description: "Searches issues.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}}
}

func (serverTools) Server(tool string) string {
	if tool == "mcp__gh__search" {
		return "gh"
	}
	return ""
}

func (s serverTools) Call(ctx context.Context, tool string, input json.RawMessage) tools.Result {
	return s.call(ctx, tool, input)
}

// TestServerTools checks that an MCP tool is offered after the built-in ones, runs
// through ServerTools, and that its call and result name its server; its output is
// capped like any tool's.
func TestServerTools(t *testing.T) {
	var got []string
	srv := serverTools{call: func(_ context.Context, tool string, input json.RawMessage) tools.Result {
		got = append(got, tool+" "+string(input))
		return tools.Result{Content: strings.Repeat("r", 5000), IsError: true}
	}}
	p := &canned{responses: [][]protocol.Message{
		{call("t1", "mcp__gh__search", map[string]string{"q": "bug"}), stop("tool_use")},
		{text("done"), stop("end_turn")},
	}}
	rec := &recorder{}
	s, err := agent.New(agent.Config{Workspace: t.TempDir(), Tools: []string{"Read"}, MaxOutput: 1000,
		MCPServers: []protocol.MCPServer{{Name: "gh", Transport: "stdio", Status: protocol.MCPConnected, ToolCount: 1}}},
		agent.Deps{Provider: p, Sink: rec, Now: time.Now, Servers: srv})
	require.NoError(t, err)
	require.NoError(t, s.Start())
	out := s.Run(context.Background(), "Find the bug.")
	require.Equal(t, agent.EndCompleted, out.End, "%+v", out.Err)

	assert.Equal(t, []string{`mcp__gh__search {"q":"bug"}`}, got)
	var names []string
	for _, sp := range p.requests[0].Tools {
		names = append(names, sp.Name)
	}
	assert.Equal(t, []string{"Read", "mcp__gh__search"}, names)
	start := rec.msgs[0].Session
	assert.Equal(t, []string{"Read", "mcp__gh__search"}, start.Tools)
	assert.Equal(t, "gh", start.MCPServers[0].Name)
	var call, result protocol.Message
	for _, m := range rec.msgs {
		switch m.Kind {
		case protocol.KindToolCall:
			call = m
		case protocol.KindToolResult:
			result = m
		default:
			// Other kinds are not under test.
		}
	}
	assert.Equal(t, "gh", call.Call.Server)
	assert.Equal(t, "gh", result.Result.Server)
	assert.True(t, result.Result.IsError)
	assert.LessOrEqual(t, len(result.Result.Content), 1000)
	assert.Contains(t, result.Result.Content, "[... truncated")
}

package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
)

func toolNames(req protocol.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

func TestTaskRunsSubAgent(t *testing.T) {
	p := &canned{responses: [][]protocol.Message{
		{text("Delegating."), call("task1", "Task", map[string]string{"description": "count files", "prompt": "Count the files."}), usage(50, 5), stop("tool_use")},
		{text("There are 3 files."), usage(20, 4), stop("end_turn")}, // the sub-agent
		{text("The sub-agent says 3."), usage(60, 6), stop("end_turn")},
	}}
	rec := &recorder{}
	slots := make(chan struct{}, 1)
	s, err := agent.New(agent.Config{Workspace: t.TempDir(), Tools: []string{"Read", "Task"}, SubAgents: agent.SubAgentConfig{MaxDepth: 1}},
		agent.Deps{Provider: p, Sink: rec, SubAgentSlots: slots})
	require.NoError(t, err)
	out := s.Run(t.Context(), "how many files?")
	require.Equal(t, agent.EndCompleted, out.End, "%+v", out.Err)
	assert.Equal(t, "The sub-agent says 3.", out.FinalText)
	assert.Equal(t, protocol.Usage{Input: 130, Output: 15}, out.Usage, "the sub-agent's usage is in the totals")
	assert.Equal(t, 1, s.Stats().SubAgentRequests)
	assert.Empty(t, slots, "the slot is given back")

	require.Len(t, p.requests, 3)
	assert.Contains(t, toolNames(p.requests[0]), "Task")
	assert.NotContains(t, toolNames(p.requests[1]), "Task", "at the depth limit Task is not offered")
	assert.Equal(t, "Count the files.", p.requests[1].Messages[0].Blocks[0].Text, "the sub-agent sees only its own prompt")

	var kinds []protocol.Kind
	var childText, result protocol.Message
	for _, m := range rec.msgs {
		kinds = append(kinds, m.Kind)
		if m.Kind == protocol.KindText && m.Parent != "" {
			childText = m
		}
		if m.Kind == protocol.KindToolResult {
			result = m
		}
		if m.Kind == protocol.KindSubAgentStart || m.Kind == protocol.KindSubAgentResult || m.Kind == protocol.KindSubAgentEnd {
			assert.Equal(t, "task1", m.Parent)
		}
	}
	assert.Equal(t, "task1", childText.Parent, "the sub-agent's messages carry the Task call's id")
	assert.Contains(t, kinds, protocol.KindSubAgentStart)
	assert.Contains(t, kinds, protocol.KindSubAgentResult)
	assert.Contains(t, kinds, protocol.KindSubAgentEnd)
	assert.False(t, result.Result.IsError)
	assert.Contains(t, result.Result.Content, "There are 3 files.")
	validWindow(t, s.Conversation())
}

func TestTaskFailureAndBudgetShare(t *testing.T) {
	p := &canned{responses: [][]protocol.Message{
		{call("task1", "Task", map[string]string{"description": "loop", "prompt": "Loop."}), stop("tool_use")},
		{call("r", "Read", map[string]string{"path": "x"}), stop("tool_use")}, // the sub-agent loops until its turns run out
	}}
	rec := &recorder{}
	s, err := agent.New(agent.Config{Workspace: t.TempDir(), Tools: []string{"Read", "Task"}, MaxTurns: 2,
		SubAgents: agent.SubAgentConfig{MaxTurns: 3}}, agent.Deps{Provider: p, Sink: rec})
	require.NoError(t, err)
	s.Run(t.Context(), "go")
	var result protocol.ToolResult
	for _, m := range rec.msgs {
		if m.Kind == protocol.KindToolResult && m.Result.Name == "Task" {
			result = m.Result
		}
	}
	assert.True(t, result.IsError, "a failed sub-agent is an error result")
	assert.Contains(t, result.Content, "failed")
	assert.Contains(t, result.Content, "max_turns")
}

func TestTaskGetsShareOfTime(t *testing.T) {
	var childDeadline time.Duration
	p := providerFunc(func(ctx context.Context, req protocol.Request) iterSeq {
		if len(req.Messages) == 1 && req.Messages[0].Blocks[0].Text == "sub" {
			d, ok := ctx.Deadline()
			require.True(t, ok)
			childDeadline = time.Until(d)
			return seq(text("done"), stop("end_turn"))
		}
		if len(req.Messages) == 1 {
			return seq(call("t", "Task", map[string]string{"description": "d", "prompt": "sub"}), stop("tool_use"))
		}
		return seq(text("ok"), stop("end_turn"))
	})
	s, err := agent.New(agent.Config{Workspace: t.TempDir(), Tools: []string{"Task"}}, agent.Deps{Provider: p, Sink: &recorder{}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	out := s.Run(ctx, "go")
	require.Equal(t, agent.EndCompleted, out.End)
	assert.InDelta(t, 30*time.Minute, childDeadline, float64(time.Minute), "the sub-agent gets half the remaining time")
}

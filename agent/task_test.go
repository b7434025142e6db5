package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/scripted"
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
	assert.Empty(t, p.requests[0].Parent, "the session's own requests have no parent")
	assert.Equal(t, "task1", p.requests[1].Parent, "the sub-agent's requests name the Task call that started it")
	assert.Empty(t, p.requests[2].Parent)

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

// TestTaskScriptedSubAgents runs nested Task calls on the scripted model, with the
// sub-agents' own steps and with a script that sub-agents replay, and checks that every
// tool call of the session and its sub-agents has an id of its own, so that each
// sub-agent's messages name its own Task call.
func TestTaskScriptedSubAgents(t *testing.T) {
	tests := []struct {
		name   string
		script string
		// wantTexts maps the text of a message to the Parent it must carry.
		wantTexts map[string]string
		wantFinal string
		wantTasks int // Task calls, one per sub-agent started
	}{
		{
			name: "own steps",
			script: `steps:
  - text: Delegating.
    tool_calls:
      - name: Task
        input: {description: outer, prompt: Do the outer part.}
        steps:
          - text: Passing the inner part on.
            tool_calls:
              - name: Task
                input: {description: inner, prompt: Do the inner part.}
                steps:
                  - tool_calls: [{name: Read, input: {path: README.md}}]
                  - text: Inner done.
          - text: Outer done.
  - text: All done.
`,
			wantTexts: map[string]string{"Delegating.": "", "Passing the inner part on.": "tc_0_0", "Inner done.": "tc_0_0.0_0",
				"Outer done.": "tc_0_0", "All done.": ""},
			wantFinal: "All done.", wantTasks: 2,
		},
		{
			name: "replayed steps",
			script: `steps:
  - tool_calls:
      - name: Task
        input: {description: again, prompt: Do it again.}
  - text: Finished.
`,
			// Depth 2 is the limit, where Task is not offered: the third call fails.
			wantTexts: map[string]string{"Finished.": ""},
			wantFinal: "Finished.", wantTasks: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(ws, "README.md"), []byte("# hi\n"), 0o644))
			rec := &recorder{}
			s, err := agent.New(agent.Config{Workspace: ws, Tools: []string{"Read", "Task"}},
				agent.Deps{Provider: scripted.New(scripted.Options{Default: script(t, tt.script)}), Sink: rec})
			require.NoError(t, err)
			out := s.Run(t.Context(), "Start.")
			require.Equal(t, agent.EndCompleted, out.End, "%+v", out.Err)
			assert.Equal(t, tt.wantFinal, out.FinalText)

			ids := map[string]bool{}
			tasks := map[string]bool{}
			starts := map[string]bool{}
			texts := map[string]string{}
			text := map[string]string{} // the text so far of the answer under way, by parent
			for _, m := range rec.msgs {
				switch m.Kind {
				case protocol.KindToolCall:
					assert.False(t, ids[m.Call.ID], "tool call id %s is used twice", m.Call.ID)
					ids[m.Call.ID] = true
					if m.Call.Name == "Task" {
						tasks[m.Call.ID] = true
					}
				case protocol.KindSubAgentStart:
					assert.True(t, tasks[m.Parent], "sub_agent_start names Task call %q", m.Parent)
					assert.False(t, starts[m.Parent], "two sub-agents name Task call %q", m.Parent)
					starts[m.Parent] = true
				case protocol.KindText:
					text[m.Parent] += m.Text
				case protocol.KindStop:
					if text[m.Parent] != "" {
						texts[text[m.Parent]] = m.Parent
					}
					delete(text, m.Parent)
				default:
					// Other kinds are not under test.
				}
			}
			assert.Len(t, tasks, tt.wantTasks)
			for want, parent := range tt.wantTexts {
				got, ok := texts[want]
				if assert.True(t, ok, "no answer %q in %v", want, texts) {
					assert.Equal(t, parent, got, "the parent of %q", want)
				}
			}
		})
	}
}

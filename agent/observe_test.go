package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/scripted"
)

// observed is one operation an observer heard of: what started it, under which
// operation, its retries and how it ended.
type observed struct {
	op      agent.Op
	parent  *observed
	retries []observedRetry
	end     *agent.SpanEnd
}

type observedRetry struct {
	m      protocol.Message
	voided bool
	usage  protocol.Usage
}

func (o *observed) Retry(m protocol.Message, voided bool, u protocol.Usage) {
	o.retries = append(o.retries, observedRetry{m: m, voided: voided, usage: u})
}

func (o *observed) End(e agent.SpanEnd) { o.end = &e }

type parentKey struct{}

// observerFunc is a one-method function-field fake of agent.Observer.
type observerFunc func(ctx context.Context, op agent.Op) (context.Context, agent.Span)

func (f observerFunc) Start(ctx context.Context, op agent.Op) (context.Context, agent.Span) {
	return f(ctx, op)
}

// recordOps returns an observer that records every operation with its parent, the
// operation in its context.
func recordOps() (agent.Observer, func() []*observed) {
	var mu sync.Mutex
	var all []*observed
	obs := observerFunc(func(ctx context.Context, op agent.Op) (context.Context, agent.Span) {
		parent, _ := ctx.Value(parentKey{}).(*observed)
		o := &observed{op: op, parent: parent}
		mu.Lock()
		all = append(all, o)
		mu.Unlock()
		return context.WithValue(ctx, parentKey{}, o), o
	})
	return obs, func() []*observed {
		mu.Lock()
		defer mu.Unlock()
		return append([]*observed(nil), all...)
	}
}

// TestObserverSeesEveryOperation runs a session whose first model call is retried
// after partial output, calls a tool, then a sub-agent, and checks the operations the
// observer heard of: their kinds, nesting and ends.
func TestObserverSeesEveryOperation(t *testing.T) {
	p := &canned{responses: [][]protocol.Message{
		{text("First try"), usage(7, 1), {Kind: protocol.KindRetry, Attempt: 1, DelayMS: 5, Reason: "overloaded: busy"},
			text("Writing."), call("w1", "Write", map[string]string{"path": "x.txt", "content": "1"}), usage(40, 4), stop("tool_use")},
		{text("Delegating."), call("task1", "Task", map[string]string{"description": "count", "prompt": "Count the files."}), usage(50, 5), stop("tool_use")},
		{text("There is 1 file."), usage(20, 2), stop("end_turn")}, // the sub-agent
		{text("Done."), usage(60, 6), stop("end_turn")},
	}}
	obs, ops := recordOps()
	cost := func(_ string, u protocol.Usage) (float64, bool) { return float64(u.Input+u.Output) / 1000, true }
	s, err := agent.New(agent.Config{SessionID: "sess-1", JobID: "job", Provenance: protocol.Provenance{Provider: "anthropic", Model: "m1"},
		Server: "api.example:443", Workspace: t.TempDir(), Tools: []string{"Write", "Task"}, SubAgents: agent.SubAgentConfig{MaxDepth: 1}},
		agent.Deps{Provider: p, Sink: &recorder{}, Observer: obs, Cost: cost})
	require.NoError(t, err)
	out := s.Run(t.Context(), "go")
	require.Equal(t, agent.EndCompleted, out.End, "%+v", out.Err)

	all := ops()
	type shape struct {
		kind   agent.OpKind
		parent agent.OpKind
	}
	var got []shape
	for _, o := range all {
		sh := shape{kind: o.op.Kind}
		if o.parent != nil {
			sh.parent = o.parent.op.Kind
		}
		got = append(got, sh)
		require.NotNil(t, o.end, "operation %d (%v) never ended", len(got), o.op.Kind)
	}
	assert.Equal(t, []shape{
		{kind: agent.OpChat}, {kind: agent.OpTool},
		{kind: agent.OpChat}, {kind: agent.OpTool},
		{kind: agent.OpSubAgent, parent: agent.OpTool}, {kind: agent.OpChat, parent: agent.OpSubAgent},
		{kind: agent.OpChat},
	}, got, "tools are siblings of their model call; a sub-agent nests in its Task call")

	first := all[0]
	assert.Equal(t, "m1", first.op.Model)
	assert.Equal(t, "anthropic", first.op.Provider)
	assert.Equal(t, "api.example:443", first.op.Server)
	assert.Equal(t, "sess-1", first.op.SessionID)
	require.Len(t, first.retries, 1)
	assert.Equal(t, "overloaded: busy", first.retries[0].m.Reason)
	assert.True(t, first.retries[0].voided, "the abandoned attempt had produced text")
	assert.Equal(t, protocol.Usage{Input: 7, Output: 1}, first.retries[0].usage)
	assert.Equal(t, protocol.Usage{Input: 40, Output: 4}, first.end.Usage, "the usage of the attempt that counted")
	assert.Equal(t, protocol.StopToolUse, first.end.Stop)
	assert.True(t, first.end.CostKnown)
	assert.InDelta(t, 0.044, first.end.CostUSD, 1e-9)
	assert.Equal(t, "Writing.", first.end.Output[0].Text)

	write := all[1]
	assert.Equal(t, "Write", write.op.Call.Name)
	assert.Equal(t, "w1", write.end.Tool.ToolUseID)
	assert.False(t, write.end.Tool.IsError, write.end.Tool.Content)

	sub := all[4]
	assert.Equal(t, "job", sub.op.Name)
	assert.NotEqual(t, "sess-1", sub.op.SessionID, "a sub-agent is a session of its own")
	assert.Equal(t, sub.op.SessionID, all[5].op.SessionID, "its model calls name it")
	assert.Equal(t, protocol.Usage{Input: 20, Output: 2}, sub.end.Usage)
	assert.Equal(t, 1, sub.end.Turns)
	assert.Nil(t, sub.end.Err)
	assert.Contains(t, all[3].end.Tool.Content, "There is 1 file.")
}

// TestObserverSeesCompaction checks that a compaction is an operation of its own with
// its summary request nested in it, whose usage is the compact usage event's.
func TestObserverSeesCompaction(t *testing.T) {
	obs, ops := recordOps()
	rec := &recorder{}
	sess, err := agent.New(agent.Config{Workspace: t.TempDir(), Tools: []string{"Read", "Write"}, MaxTurns: 40,
		Compaction: agent.CompactConfig{MaxContext: 6000}},
		agent.Deps{Provider: scripted.New(scripted.Options{Default: script(t, bigSteps(12, 2400))}), Sink: rec, Observer: obs})
	require.NoError(t, err)
	out := sess.Run(t.Context(), "write the files")
	require.Equal(t, agent.EndCompleted, out.End, "%+v", out.Err)

	var compactUsage []protocol.Usage
	for _, m := range rec.msgs {
		if m.Kind == protocol.KindUsage && m.UsageKind == "compact" {
			compactUsage = append(compactUsage, m.Usage)
		}
	}
	var compactions []*observed
	var summaries []protocol.Usage
	for _, o := range ops() {
		require.NotNil(t, o.end)
		switch {
		case o.op.Kind == agent.OpCompact:
			compactions = append(compactions, o)
			assert.Nil(t, o.parent)
			assert.Equal(t, agent.TriggerAuto, o.op.Trigger)
			assert.NotEmpty(t, o.op.Reason)
			assert.Positive(t, o.op.Keep)
			assert.Greater(t, o.op.Turns, o.op.Keep)
			assert.Nil(t, o.end.Err)
		case o.op.Kind == agent.OpChat && o.parent != nil:
			require.Equal(t, agent.OpCompact, o.parent.op.Kind)
			assert.Equal(t, protocol.ToolChoiceNone, o.op.Request.ToolChoice, "the summary request")
			summaries = append(summaries, o.end.Usage)
		}
	}
	require.GreaterOrEqual(t, len(compactions), 2)
	assert.Equal(t, compactUsage, summaries)
}

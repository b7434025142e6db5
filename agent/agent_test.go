package agent_test

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/testexit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit)) }

// providerFunc is a one-method function-field fake of agent.Provider.
type providerFunc func(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message]

func (f providerFunc) Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
	return f(ctx, req)
}

// canned answers call i with responses[i] (the last one repeats) and records requests.
type canned struct {
	mu        sync.Mutex
	responses [][]protocol.Message
	requests  []protocol.Request
}

func (s *canned) Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
	s.mu.Lock()
	i := len(s.requests)
	s.requests = append(s.requests, req)
	resp := s.responses[min(i, len(s.responses)-1)]
	s.mu.Unlock()
	return func(yield func(protocol.Message) bool) {
		for _, m := range resp {
			if ctx.Err() != nil {
				yield(protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrCancelled, Message: "cancelled"}})
				return
			}
			if !yield(m) {
				return
			}
		}
	}
}

// recorder is a sink that keeps every message.
type recorder struct {
	mu   sync.Mutex
	msgs []protocol.Message
}

func (r *recorder) Write(m protocol.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	return nil
}

// Close lets the recorder stand in a sink.Multi.
func (r *recorder) Close() error { return nil }

func (r *recorder) kinds() []protocol.Kind {
	var out []protocol.Kind
	for _, m := range r.msgs {
		out = append(out, m.Kind)
	}
	return out
}

// iterSeq is the provider's message sequence type.
type iterSeq = iter.Seq[protocol.Message]

// seq yields msgs in order.
func seq(msgs ...protocol.Message) iterSeq {
	return func(yield func(protocol.Message) bool) {
		for _, m := range msgs {
			if !yield(m) {
				return
			}
		}
	}
}

func text(s string) protocol.Message { return protocol.Message{Kind: protocol.KindText, Text: s} }
func stop(r protocol.StopReason) protocol.Message {
	return protocol.Message{Kind: protocol.KindStop, Stop: r}
}
func usage(in, out int64) protocol.Message {
	return protocol.Message{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: in, Output: out}}
}
func call(id, name string, input any) protocol.Message {
	b, _ := json.Marshal(input)
	return protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{ID: id, Name: name, Input: string(b)}}
}

func newSession(t *testing.T, p agent.Provider, cfg agent.Config) (*agent.Session, *recorder) {
	t.Helper()
	if cfg.Workspace == "" {
		cfg.Workspace = t.TempDir()
	}
	rec := &recorder{}
	s, err := agent.New(cfg, agent.Deps{Provider: p, Sink: rec, Now: time.Now})
	require.NoError(t, err)
	return s, rec
}

// validWindow checks that every tool_use has its tool_result in the next turn and that
// roles alternate.
func validWindow(t *testing.T, turns []protocol.Turn) {
	t.Helper()
	require.NotEmpty(t, turns)
	assert.Equal(t, protocol.RoleUser, turns[0].Role, "window starts with a user turn")
	assert.True(t, turns[0].IsUserText(), "window starts with a real user message")
	for i, turn := range turns {
		if i > 0 {
			assert.NotEqual(t, turns[i-1].Role, turn.Role, "roles alternate at turn %d", i)
		}
		uses := turn.ToolUses()
		if len(uses) == 0 {
			continue
		}
		require.Less(t, i+1, len(turns), "tool uses of turn %d have no results", i)
		results := map[string]bool{}
		for _, b := range turns[i+1].Blocks {
			if b.Type == protocol.BlockToolResult {
				results[b.ToolUseID] = true
			}
		}
		for _, u := range uses {
			assert.True(t, results[u.ID], "tool_use %s of turn %d has no result", u.ID, i)
		}
	}
}

func TestToolRoundTrip(t *testing.T) {
	p := &canned{responses: [][]protocol.Message{
		{text("Writing."), call("t1", "Write", map[string]string{"path": "a.txt", "content": "hello\n"}),
			call("t2", "Read", map[string]string{"path": "a.txt"}), usage(10, 5), stop("tool_use")},
		{text("Done."), usage(20, 3), stop("end_turn")},
	}}
	s, rec := newSession(t, p, agent.Config{Tools: []string{"Read", "Write"}})
	out := s.Run(t.Context(), "write a.txt")

	assert.Equal(t, agent.EndCompleted, out.End)
	assert.Equal(t, 2, out.Turns)
	assert.Equal(t, "Done.", out.FinalText)
	assert.Equal(t, protocol.Usage{Input: 30, Output: 8}, out.Usage)
	conv := s.Conversation()
	validWindow(t, conv)
	require.Len(t, conv, 4)
	results := conv[2].Blocks
	require.Len(t, results, 2)
	assert.Equal(t, "t1", results[0].ToolUseID)
	assert.Contains(t, results[1].Content, "hello")
	// The second request carries both results.
	require.Len(t, p.requests, 2)
	assert.Len(t, p.requests[1].Messages, 3)
	assert.Equal(t, []protocol.Kind{
		protocol.KindText, protocol.KindToolCall, protocol.KindToolResult, protocol.KindToolCall, protocol.KindToolResult,
		protocol.KindUsage, protocol.KindStop, protocol.KindText, protocol.KindUsage, protocol.KindStop,
	}, rec.kinds())
}

func TestRetryDiscardsPartialAttempt(t *testing.T) {
	ws := t.TempDir()
	p := &canned{responses: [][]protocol.Message{
		{text("First try "), call("t1", "Write", map[string]string{"path": "x.txt", "content": "1"}),
			{Kind: protocol.KindRetry, Attempt: 1, DelayMS: 10, Reason: "network: cut"},
			text("Second try."), call("t2", "Write", map[string]string{"path": "y.txt", "content": "2"}), stop("tool_use")},
		{text("ok"), stop("end_turn")},
	}}
	s, rec := newSession(t, p, agent.Config{Workspace: ws, Tools: []string{"Write"}})
	out := s.Run(t.Context(), "go")
	require.Equal(t, agent.EndCompleted, out.End)
	conv := s.Conversation()
	validWindow(t, conv)
	raw, err := json.Marshal(conv)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "First try", "the abandoned attempt is not in the conversation")
	assert.NotContains(t, string(raw), `"t1"`)
	assert.Contains(t, string(raw), "Second try.")
	assert.Contains(t, rec.kinds(), protocol.KindRetry)
}

func TestEnds(t *testing.T) {
	loop := []protocol.Message{call("t", "Read", map[string]string{"path": "none"}), stop("tool_use")}
	tests := map[string]struct {
		give     [][]protocol.Message
		maxTurns int
		want     agent.End
		wantKind protocol.ErrorKind
	}{
		"max turns":      {give: [][]protocol.Message{loop}, maxTurns: 3, want: agent.EndMaxTurns, wantKind: protocol.ErrMaxTurns},
		"max tokens":     {give: [][]protocol.Message{{text("cut"), stop("max_tokens")}}, want: agent.EndMaxTokens, wantKind: protocol.ErrMaxTokens},
		"provider error": {give: [][]protocol.Message{{text("par"), {Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrAuth, Message: "HTTP 401"}}}}, want: agent.EndProvider, wantKind: protocol.ErrAuth},
		"no stop":        {give: [][]protocol.Message{{text("x")}}, want: agent.EndProvider, wantKind: protocol.ErrStream},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s, _ := newSession(t, &canned{responses: tt.give}, agent.Config{MaxTurns: tt.maxTurns, Tools: []string{"Read"}})
			out := s.Run(t.Context(), "go")
			assert.Equal(t, tt.want, out.End)
			require.NotNil(t, out.Err)
			assert.Equal(t, tt.wantKind, out.Err.Kind)
			if tt.maxTurns > 0 {
				assert.Equal(t, tt.maxTurns, out.Turns)
			}
			validWindow(t, s.Conversation())
		})
	}
}

// TestStopReasons checks what each stop reason of a call without tool calls asks of the
// loop: go on with another call, end the session, or fail it.
func TestStopReasons(t *testing.T) {
	tests := map[string]struct {
		give      protocol.StopReason
		wantEnd   agent.End
		wantTurns int
	}{
		"end_turn":      {give: protocol.StopEndTurn, wantEnd: agent.EndCompleted, wantTurns: 1},
		"stop_sequence": {give: protocol.StopSequence, wantEnd: agent.EndCompleted, wantTurns: 1},
		"refusal":       {give: protocol.StopRefusal, wantEnd: agent.EndCompleted, wantTurns: 1},
		"foreign word":  {give: "some_future_reason", wantEnd: agent.EndCompleted, wantTurns: 1},
		"tool_use":      {give: protocol.StopToolUse, wantEnd: agent.EndCompleted, wantTurns: 2},
		"pause_turn":    {give: protocol.StopPauseTurn, wantEnd: agent.EndCompleted, wantTurns: 2},
		"max_tokens":    {give: protocol.StopMaxTokens, wantEnd: agent.EndMaxTokens, wantTurns: 1},
		// The canned answer to the compaction request is "second", so compaction works.
		"context window": {give: protocol.StopContextWindow, wantEnd: agent.EndCompleted, wantTurns: 2},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p := &canned{responses: [][]protocol.Message{{text("first"), stop(tt.give)}, {text("second"), stop(protocol.StopEndTurn)}}}
			s, _ := newSession(t, p, agent.Config{})
			out := s.Run(t.Context(), "go")
			assert.Equal(t, tt.wantEnd, out.End, "end")
			assert.Equal(t, tt.wantTurns, out.Turns, "turns")
			last := tt.give
			if tt.wantTurns > 1 {
				last = protocol.StopEndTurn
			}
			assert.Equal(t, last, out.StopReason, "the last call's stop")
		})
	}
}

func TestMaxTokensKeepsToolsThatRan(t *testing.T) {
	p := &canned{responses: [][]protocol.Message{
		{call("t1", "Write", map[string]string{"path": "a.txt", "content": "x"}), text("and then"), stop("max_tokens")},
	}}
	s, _ := newSession(t, p, agent.Config{Tools: []string{"Write"}})
	out := s.Run(t.Context(), "go")
	assert.Equal(t, agent.EndMaxTokens, out.End)
	conv := s.Conversation()
	validWindow(t, conv)
	require.Len(t, conv, 3, "the truncated assistant turn and its tool result are kept")
}

func TestCancelMidTool(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := providerFunc(func(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
		return func(yield func(protocol.Message) bool) {
			if !yield(call("b1", "Bash", map[string]string{"command": "echo started; sleep 100"})) {
				return
			}
			yield(protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrCancelled, Message: "cancelled"}})
		}
	})
	rec := &recorder{}
	// The tool's first output cancels the session, while the command still sleeps.
	s, err := agent.New(agent.Config{Workspace: t.TempDir(), Tools: []string{"Bash"}},
		agent.Deps{Provider: p, Sink: rec, Activity: cancel})
	require.NoError(t, err)
	start := time.Now()
	out := s.Run(ctx, "go")
	assert.Less(t, time.Since(start), 30*time.Second, "the sleeping command is killed, not waited for")
	assert.Equal(t, agent.EndCancelled, out.End)
	validWindow(t, s.Conversation())
	var result protocol.Message
	for _, m := range rec.msgs {
		if m.Kind == protocol.KindToolResult {
			result = m
		}
	}
	assert.True(t, result.Result.IsError, "the interrupted tool reports an error")
	assert.Contains(t, result.Result.Content, "started")
}

func TestCancelMidStream(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := providerFunc(func(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
		return func(yield func(protocol.Message) bool) {
			if !yield(text("part")) {
				return
			}
			cancel()
			<-ctx.Done()
			yield(protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrCancelled, Message: "cancelled"}})
		}
	})
	s, _ := newSession(t, p, agent.Config{})
	out := s.Run(ctx, "go")
	assert.Equal(t, agent.EndCancelled, out.End)
	assert.Len(t, s.Conversation(), 1, "the partial response is dropped")
}

func TestUnknownToolAndBadInput(t *testing.T) {
	p := &canned{responses: [][]protocol.Message{
		{call("t1", "Nope", map[string]string{}),
			{Kind: protocol.KindToolCall, Call: protocol.ToolCall{ID: "t2", Name: "Read", Input: `{"path": "a`}}, stop("tool_use")},
		{text("ok"), stop("end_turn")},
	}}
	s, rec := newSession(t, p, agent.Config{Tools: []string{"Read"}})
	out := s.Run(t.Context(), "go")
	require.Equal(t, agent.EndCompleted, out.End)
	var results []protocol.ToolResult
	for _, m := range rec.msgs {
		if m.Kind == protocol.KindToolResult {
			results = append(results, m.Result)
		}
	}
	require.Len(t, results, 2)
	assert.True(t, results[0].IsError)
	assert.Contains(t, results[0].Content, "unknown tool")
	assert.True(t, results[1].IsError)
	assert.Contains(t, results[1].Content, "not a JSON object")
	validWindow(t, s.Conversation())
}

func TestBudget(t *testing.T) {
	loop := []protocol.Message{call("t", "Read", map[string]string{"path": "x"}), usage(1000, 1000), stop("tool_use")}
	p := &canned{responses: [][]protocol.Message{loop}}
	rec := &recorder{}
	cost := func(model string, u protocol.Usage) (float64, bool) { return float64(u.Input+u.Output) / 1e4, true }
	s, err := agent.New(agent.Config{Workspace: t.TempDir(), Tools: []string{"Read"}, Budget: agent.Budget{MaxCostUSD: 0.5}},
		agent.Deps{Provider: p, Sink: rec, Cost: cost})
	require.NoError(t, err)
	out := s.Run(t.Context(), "go")
	assert.Equal(t, agent.EndBudget, out.End)
	assert.Equal(t, 3, out.Turns, "0.2 + 0.2 + 0.2 crosses 0.5 on the third call")
	assert.InDelta(t, 0.6, out.CostUSD, 1e-9)
	assert.True(t, out.CostKnown)
}

func TestSessionID(t *testing.T) {
	id := agent.NewSessionID(time.Date(2026, 5, 6, 12, 34, 56, 0, time.UTC))
	assert.Regexp(t, `^20260506-123456-[0-9a-f]{4}$`, id)
}

func TestProjectKey(t *testing.T) {
	tests := map[string]string{
		"/Users/lloyd/claude-code/bash-agent": "-Users-lloyd-claude-code-bash-agent",
		"/tmp/a b/c:d":                        "-tmp-a-b-c-d",
		"///tmp///a--b///":                    "-tmp-a-b",
	}
	for give, want := range tests {
		assert.Equal(t, want, agent.ProjectKey(give), give)
	}
}

func TestStopEventsNotDuplicated(t *testing.T) {
	p := &canned{responses: [][]protocol.Message{{text("hi"), stop("end_turn")}}}
	s, rec := newSession(t, p, agent.Config{})
	s.Run(t.Context(), "go")
	n := 0
	for _, k := range rec.kinds() {
		if k == protocol.KindStop {
			n++
		}
	}
	assert.Equal(t, 1, n)
	assert.Equal(t, "hi", strings.TrimSpace(rec.msgs[0].Text))
}

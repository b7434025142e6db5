package scripted_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/scripted"
)

func TestStreamConversation(t *testing.T) {
	s, err := scripted.LoadScript("testdata/scripts/hello.yaml")
	require.NoError(t, err)
	m := scripted.New(scripted.Options{Scripts: map[string]*scripted.Script{"hello": s}})
	req := protocol.Request{Model: "hello", Messages: []protocol.Turn{user("write hello.go")}}

	got := collect(m.Stream(t.Context(), req))
	want := []protocol.Message{
		thinking("Plan the change."),
		{Kind: protocol.KindThinking, Signature: got[1].Signature},
		text("I'll create hell"), text("o.go."),
		call("Write", "tc_0_0", `{"path":"hello.go","content":"package main\n\nfunc main() { println(\"hi\") }\n"}`),
		usage(1200, 80),
		stop("tool_use"),
	}
	assert.Equal(t, want, got)
	assert.Regexp(t, `^sig_[0-9a-f]{32}$`, got[1].Signature)

	req.Messages = append(req.Messages, assistantTurn(got), results(got, func(protocol.ToolCall) string { return "wrote 52 bytes" }))
	got = collect(m.Stream(t.Context(), req))
	require.Len(t, got, 3)
	assert.Equal(t, call("Bash", "tc_1_0", `{"command":"go run hello.go","timeout":30}`), got[0])
	assert.Equal(t, stop("tool_use"), got[2])

	req.Messages = append(req.Messages, assistantTurn(got), results(got, func(protocol.ToolCall) string { return "hi" }))
	got = collect(m.Stream(t.Context(), req))
	assert.Equal(t, "Done: hello.go prints hi.", textOf(got))
	assert.Equal(t, stop("end_turn"), last(got))

	req.Messages = append(req.Messages, assistantTurn(got), user("and now?"))
	got = collect(m.Stream(t.Context(), req))
	assert.Equal(t, scripted.FinishedText, textOf(got))
	assert.Equal(t, stop("end_turn"), last(got))
}

func TestStepSelection(t *testing.T) {
	var src strings.Builder
	src.WriteString("steps:\n")
	for i := range 6 {
		fmt.Fprintf(&src, "  - text: step %d\n", i)
	}
	m := scripted.New(scripted.Options{Default: mustParse(t, src.String())})
	const (
		ua = protocol.RoleUser
		as = protocol.RoleAssistant
	)
	tests := []struct {
		name string
		give []protocol.Turn
		want string
	}{
		{name: "empty", want: "step 0"},
		{name: "first prompt", give: []protocol.Turn{user("go")}, want: "step 0"},
		{name: "after a tool round", give: []protocol.Turn{user("go"), turn(as, toolUse("tc_0_0")), turn(ua, toolResult("tc_0_0"))}, want: "step 1"},
		{name: "parallel calls", give: []protocol.Turn{user("go"), turn(as, toolUse("tc_0_0"), toolUse("tc_0_1")),
			turn(ua, toolResult("tc_0_0"), toolResult("tc_0_1"))}, want: "step 1"},
		{name: "text step then a new prompt", give: []protocol.Turn{user("go"), turn(as, toolUse("tc_0_0")),
			turn(ua, toolResult("tc_0_0")), assistant("step 1"), user("more")}, want: "step 2"},
		{name: "text-only conversation", give: []protocol.Turn{user("a"), assistant("step 0"), user("b"), assistant("step 1"), user("c")}, want: "step 2"},
		{name: "after compaction", give: []protocol.Turn{user("Task focus: …"), turn(as, toolUse("tc_3_1")), turn(ua, toolResult("tc_3_1"))}, want: "step 4"},
		{name: "only the results survive", give: []protocol.Turn{turn(ua, toolResult("tc_2_0"), protocol.Block{Type: protocol.BlockText, Text: "go on"})}, want: "step 3"},
		{name: "foreign ids are ignored", give: []protocol.Turn{user("go"), turn(as, toolUse("toolu_01")), turn(ua, toolResult("toolu_01"))}, want: "step 1"},
		{name: "malformed ids are ignored", give: []protocol.Turn{user("go"), turn(as, toolUse("tc_x_0"), toolUse("tc_1"), toolUse("tc_-1_0"), toolUse("tc_99999999999_0"))}, want: "step 1"},
		{name: "past the end", give: []protocol.Turn{user("go"), turn(as, toolUse("tc_5_0")), turn(ua, toolResult("tc_5_0"))}, want: scripted.FinishedText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(m.Stream(t.Context(), protocol.Request{Messages: tt.give}))
			assert.Equal(t, tt.want, textOf(got))
			assert.Equal(t, stop("end_turn"), last(got))
		})
	}
}

func TestCompaction(t *testing.T) {
	m := scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: never\n")})
	req := protocol.Request{
		System: "You are a coding agent.",
		Tools:  []protocol.ToolSpec{{Name: "Bash"}},
		Messages: []protocol.Turn{
			user("Fix the build in cmd/agentrun"),
			turn(protocol.RoleAssistant, protocol.Block{Type: protocol.BlockToolUse, ID: "tc_0_0", Name: "Bash", Input: []byte(`{"command":"go build ./..."}`)}),
			turn(protocol.RoleUser, protocol.Block{Type: protocol.BlockToolResult, ToolUseID: "tc_0_0", Content: "cmd/agentrun/main.go:12: undefined: run\nexit 1"}),
			turn(protocol.RoleAssistant, protocol.Block{Type: protocol.BlockToolUse, ID: "tc_1_0", Name: "Read", Input: []byte(`{"path":"cmd/agentrun/main.go"}`)},
				protocol.Block{Type: protocol.BlockToolUse, ID: "tc_1_1", Name: "Bash", Input: []byte(`{"command":"ls"}`)}),
			turn(protocol.RoleUser, protocol.Block{Type: protocol.BlockToolResult, ToolUseID: "tc_1_0", Content: "package main"},
				protocol.Block{Type: protocol.BlockToolResult, ToolUseID: "tc_1_1", Content: "go.mod  README.md"}),
			user("Also add a test please"),
			user("Summarise the conversation so far. " + scripted.CompactMarker),
		},
	}
	got := collect(m.Stream(t.Context(), req))
	want := "Task focus: Fix the build in cmd/agentrun\n" +
		"Latest request: Also add a test please\n" +
		"Progress: 3 tool calls: Bash ×2, Read ×1\n" +
		"Tool evidence: files seen: cmd/agentrun/main.go, go.mod, README.md; last result: go.mod  README.md\n" +
		"Reflections: summary written by agentrun's scripted model from 7 messages."
	assert.Equal(t, want, textOf(got))
	assert.Empty(t, calls(got))
	assert.Equal(t, stop("end_turn"), last(got))
	assert.Equal(t, "[agentrun:compact]", scripted.CompactMarker)

	got = collect(m.Stream(t.Context(), protocol.Request{Messages: []protocol.Turn{user(scripted.CompactMarker)}}))
	assert.Equal(t, "Task focus: none\nLatest request: none\nProgress: no tool calls yet\nTool evidence: none\n"+
		"Reflections: summary written by agentrun's scripted model from 1 messages.", textOf(got))
}

func TestUsageEstimate(t *testing.T) {
	tests := map[string]struct {
		give protocol.Request
		step string
		want protocol.Usage
	}{
		"estimated": {
			// 4 + 8 + 1 + 1 + 33 (no schema counts as {"type":"object","properties":{}}) = 47 bytes.
			give: protocol.Request{System: "abcd", Messages: []protocol.Turn{user("12345678")},
				Tools: []protocol.ToolSpec{{Name: "T", Description: "d"}}},
			step: "steps:\n  - text: hello world!\n",
			want: protocol.Usage{Input: 11, Output: 3},
		},
		"json measured compactly, thinking left out": {
			give: protocol.Request{Messages: []protocol.Turn{
				turn(protocol.RoleAssistant, protocol.Block{Type: protocol.BlockThinking, Text: strings.Repeat("x", 400), Signature: "s"},
					protocol.Block{Type: protocol.BlockToolUse, ID: "a", Name: "T", Input: []byte(`{ "a" : [1, 2] }`)}),
				turn(protocol.RoleUser, protocol.Block{Type: protocol.BlockToolResult, ToolUseID: "a", Content: "1234"}),
			}, Tools: []protocol.ToolSpec{{Name: "T", InputSchema: []byte(`{"type": "object", "properties": {}}`)}}},
			// {"a":[1,2]} 11 + 4 + 1 + 33 = 49; thinking 2 + text 2 + {"q":"<&>"} 11 = 15.
			// The assistant turn makes this step 1.
			step: "steps:\n  - text: unused\n  - {thinking: ab, text: cd, tool_calls: [{name: T, input: {q: <&>}}]}\n",
			want: protocol.Usage{Input: 12, Output: 3},
		},
		"given": {
			give: protocol.Request{Messages: []protocol.Turn{user(strings.Repeat("x", 400))}},
			step: "steps:\n  - {text: hi, usage: {input: 5, cache_read: 7, cache_creation: 9}}\n",
			want: protocol.Usage{Input: 5, Output: 0, CacheRead: 7, CacheCreation: 9},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := scripted.New(scripted.Options{Default: mustParse(t, tt.step)})
			got := collect(m.Stream(t.Context(), tt.give))
			require.GreaterOrEqual(t, len(got), 2)
			assert.Equal(t, protocol.Message{Kind: protocol.KindUsage, Usage: tt.want}, got[len(got)-2])
		})
	}
}

func TestStreamFaults(t *testing.T) {
	partial := []protocol.Message{text("a"), text("b"), text("c"), text("d")}
	tests := map[string]struct {
		fault string
		want  []protocol.Message // the failing attempt
	}{
		"429":                 {fault: "{status: 429, retry_after: 1s}", want: []protocol.Message{fail(protocol.ErrRateLimit)}},
		"529":                 {fault: "{status: 529}", want: []protocol.Message{fail(protocol.ErrOverloaded)}},
		"503":                 {fault: "{status: 503}", want: []protocol.Message{fail(protocol.ErrServer)}},
		"503 overloaded body": {fault: `{status: 503, body: '{"error":{"type":"overloaded_error","message":"busy"}}'}`, want: []protocol.Message{fail(protocol.ErrOverloaded)}},
		"401":                 {fault: "{status: 401}", want: []protocol.Message{fail(protocol.ErrAuth)}},
		"403":                 {fault: "{status: 403}", want: []protocol.Message{fail(protocol.ErrAuth)}},
		"400":                 {fault: "{status: 400}", want: []protocol.Message{fail(protocol.ErrRequest)}},
		"404":                 {fault: "{status: 404}", want: []protocol.Message{fail(protocol.ErrRequest)}},
		"408":                 {fault: "{status: 408}", want: []protocol.Message{fail(protocol.ErrTimeout)}},
		"409":                 {fault: "{status: 409}", want: []protocol.Message{fail(protocol.ErrServer)}},
		"cut":                 {fault: "{cut: true}", want: append(partial, fail(protocol.ErrNetwork))},
		"stall":               {fault: "{stall: true}", want: append(partial, fail(protocol.ErrInactivity))},
		"malformed":           {fault: "{malformed: true}", want: append(partial, fail(protocol.ErrStream))},
		"eof":                 {fault: "{eof: true}", want: append(partial, fail(protocol.ErrStream))},
		"overloaded event":    {fault: "{error_event: overloaded_error}", want: append(partial, fail(protocol.ErrOverloaded))},
		"api_error event":     {fault: "{error_event: api_error}", want: append(partial, fail(protocol.ErrServer))},
		"rate limit event":    {fault: "{error_event: rate_limit_error}", want: append(partial, fail(protocol.ErrRateLimit))},
		"bad request event":   {fault: "{error_event: invalid_request_error}", want: append(partial, fail(protocol.ErrRequest))},
		"unknown type event":  {fault: "{error_event: teapot_error}", want: append(partial, fail(protocol.ErrServer))},
	}
	full := []protocol.Message{text("a"), text("b"), text("c"), text("d"), text("e"), text("f"), text("g"), text("h"),
		usage(0, 2), stop("end_turn")}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := scripted.New(scripted.Options{ChunkRunes: 1, Default: mustParse(t, "steps:\n  - text: abcdefgh\n    fault: "+tt.fault+"\n")})
			req := protocol.Request{Messages: []protocol.Turn{user("go")}}
			got := collect(m.Stream(t.Context(), req))
			assert.Equal(t, tt.want, kinds(got))
			assert.NotEmpty(t, last(got).Err.Message)
			assert.Equal(t, full, collect(m.Stream(t.Context(), req)), "the second attempt succeeds")
			other := protocol.Request{Messages: []protocol.Turn{user("another session")}}
			assert.Equal(t, tt.want, kinds(collect(m.Stream(t.Context(), other))), "attempts are counted per session")
		})
	}
}

func TestStreamFaultMessages(t *testing.T) {
	tests := map[string]struct {
		fault string
		want  protocol.Error
	}{
		"default body": {fault: "{status: 429}", want: protocol.Error{Kind: protocol.ErrRateLimit, Message: "HTTP 429: Too Many Requests (scripted fault)"}},
		"custom body":  {fault: `{status: 500, body: '{"error":{"message":"disk on fire"}}'}`, want: protocol.Error{Kind: protocol.ErrServer, Message: "HTTP 500: disk on fire"}},
		"string error": {fault: `{status: 502, body: '{"error":"bad gateway"}'}`, want: protocol.Error{Kind: protocol.ErrServer, Message: "HTTP 502: bad gateway"}},
		"plain body":   {fault: `{status: 400, body: 'nope'}`, want: protocol.Error{Kind: protocol.ErrRequest, Message: "HTTP 400: nope"}},
		"529":          {fault: "{status: 529}", want: protocol.Error{Kind: protocol.ErrOverloaded, Message: "HTTP 529: Overloaded (scripted fault)"}},
		"error event":  {fault: "{error_event: overloaded_error}", want: protocol.Error{Kind: protocol.ErrOverloaded, Message: "Overloaded (scripted fault)"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: x\n    fault: "+tt.fault+"\n")})
			got := collect(m.Stream(t.Context(), protocol.Request{}))
			assert.Equal(t, protocol.Message{Kind: protocol.KindError, Err: tt.want}, last(got))
		})
	}
}

func TestStreamFaultTimes(t *testing.T) {
	m := scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: ok\n    fault: {status: 503, times: 3}\n")})
	req := protocol.Request{Messages: []protocol.Turn{user("go")}}
	for range 3 {
		assert.Equal(t, []protocol.Message{fail(protocol.ErrServer)}, kinds(collect(m.Stream(t.Context(), req))))
	}
	assert.Equal(t, "ok", textOf(collect(m.Stream(t.Context(), req))))
}

func TestStreamCutNeverSplitsToolCalls(t *testing.T) {
	tests := map[string]struct {
		give string
		want []protocol.Message
	}{
		"thinking then calls": {
			give: "{thinking: ab, text: c, tool_calls: [{name: T}], fault: {cut: true}}",
			want: []protocol.Message{thinking("a"), thinking("b"), fail(protocol.ErrNetwork)},
		},
		"calls early": {
			give: "{text: a, tool_calls: [{name: T}, {name: T}, {name: T}], fault: {cut: true}}",
			want: []protocol.Message{text("a"), fail(protocol.ErrNetwork)},
		},
		"calls only": {
			give: "{tool_calls: [{name: T}, {name: T}], fault: {eof: true}}",
			want: []protocol.Message{fail(protocol.ErrStream)},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := scripted.New(scripted.Options{ChunkRunes: 1, Default: mustParse(t, "steps:\n  - "+tt.give+"\n")})
			assert.Equal(t, tt.want, kinds(collect(m.Stream(t.Context(), protocol.Request{}))))
		})
	}
}

func TestStreamPanicFault(t *testing.T) {
	m := scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: x\n    fault: {panic: boom}\n")})
	seq := m.Stream(t.Context(), protocol.Request{})
	assert.PanicsWithValue(t, "scripted: boom", func() { collect(seq) })
	assert.Equal(t, "x", textOf(collect(seq)), "the second attempt succeeds")
}

func TestStreamCancel(t *testing.T) {
	m := scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: x\n")})
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errors.New("user pressed ^C"))
	assert.Equal(t, []protocol.Message{{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrCancelled, Message: "user pressed ^C"}}},
		collect(m.Stream(ctx, protocol.Request{})))
}

func TestStreamStopsWhenConsumerStops(t *testing.T) {
	m := scripted.New(scripted.Options{ChunkRunes: 1, Default: mustParse(t, "steps:\n  - text: abcdef\n")})
	var got []protocol.Message
	for msg := range m.Stream(t.Context(), protocol.Request{}) {
		got = append(got, msg)
		if len(got) == 2 {
			break
		}
	}
	assert.Equal(t, []protocol.Message{text("a"), text("b")}, got)
}

func TestStreamLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := scripted.New(scripted.Options{ChunkRunes: 2, FirstByte: 2 * time.Second, ChunkDelay: 100 * time.Millisecond,
			Default: mustParse(t, "steps:\n  - {thinking: ab, text: abcd, tool_calls: [{name: T, input: {x: 123456789012345678901234567890}}]}\n")})
		start := time.Now()
		var at []time.Duration
		for range m.Stream(t.Context(), protocol.Request{}) {
			at = append(at, time.Since(start))
		}
		ms := time.Millisecond
		// thinking "ab", signature, text "ab", "cd", then a call sent as 2 fragments
		// ({"x":123456789012345678901234567890} in pieces of 20 and 16 bytes), usage and stop.
		assert.Equal(t, []time.Duration{2000 * ms, 2000 * ms, 2100 * ms, 2200 * ms, 2400 * ms, 2400 * ms, 2400 * ms}, at)
	})
}

func TestStreamLatencyCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := scripted.New(scripted.Options{ChunkRunes: 1, FirstByte: time.Second, ChunkDelay: time.Second,
			Default: mustParse(t, "steps:\n  - text: abc\n")})
		ctx, cancel := context.WithTimeout(t.Context(), 2500*time.Millisecond)
		defer cancel()
		got := collect(m.Stream(ctx, protocol.Request{}))
		assert.Equal(t, []protocol.Message{text("a"), text("b"), fail(protocol.ErrTimeout)}, kinds(got))
	})
}

func TestStreamConcurrentSessions(t *testing.T) {
	s, err := scripted.LoadScript("testdata/scripts/faults.yaml")
	require.NoError(t, err)
	m := scripted.New(scripted.Options{Default: s})
	const sessions = 24
	attempts := make([]int, sessions)
	texts := make([]string, sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			req := protocol.Request{Messages: []protocol.Turn{user(fmt.Sprintf("session %d", i))}}
			for {
				attempts[i]++
				got := collect(m.Stream(t.Context(), req))
				switch last(got).Kind {
				case protocol.KindError:
					continue
				case protocol.KindStop:
				default:
					t.Errorf("session %d: unexpected end %v", i, last(got))
					return
				}
				texts[i] += textOf(got) + "|"
				if last(got).Stop != protocol.StopEndTurn || len(req.Messages) > 12 {
					return
				}
				req.Messages = append(req.Messages, assistantTurn(got), user("next"))
			}
		})
	}
	wg.Wait()
	for i := range sessions {
		// One 429, two cuts and one overload before the four answers.
		assert.Equal(t, 8, attempts[i], "session %d", i)
		assert.Equal(t, "First answer after a rate limit.|Second answer after a cut.|Third answer after an overload.|Refused.|", texts[i])
	}
}

// subAgentScript has a Task call with steps of its own, nesting one more, and a Task
// call without steps, whose sub-agent replays the steps of the agent that made it.
const subAgentScript = `steps:
  - text: top 0
    tool_calls:
      - name: Task
        input: {description: own, prompt: Play your own steps.}
        steps:
          - text: own 0
            tool_calls:
              - name: Read
                input: {path: a.txt}
              - name: Task
                input: {description: nested, prompt: Nested.}
                steps:
                  - text: nested 0
          # A Task without steps: its sub-agent replays the steps of "own".
          - text: own 1
            tool_calls: [{name: Task, input: {description: replay, prompt: Replay.}}]
      - name: Task
        input: {description: empty, prompt: Say nothing.}
        steps: []
  - text: top 1
`

func TestSubAgentSteps(t *testing.T) {
	m := scripted.New(scripted.Options{Default: mustParse(t, subAgentScript)})
	const (
		ua = protocol.RoleUser
		as = protocol.RoleAssistant
	)
	tests := []struct {
		name      string
		parent    string
		give      []protocol.Turn
		wantText  string
		wantCalls []string // ids
	}{
		{name: "top", give: []protocol.Turn{user("go")}, wantText: "top 0", wantCalls: []string{"tc_0_0", "tc_0_1"}},
		{name: "top after its tool round", give: []protocol.Turn{user("go"), turn(as, toolUse("tc_0_0"), toolUse("tc_0_1")),
			turn(ua, toolResult("tc_0_0"), toolResult("tc_0_1"))}, wantText: "top 1"},
		{name: "own steps", parent: "tc_0_0", give: []protocol.Turn{user("Play your own steps.")}, wantText: "own 0",
			wantCalls: []string{"tc_0_0.0_0", "tc_0_0.0_1"}},
		{name: "own steps after a tool round", parent: "tc_0_0", give: []protocol.Turn{user("Play your own steps."),
			turn(as, toolUse("tc_0_0.0_0"), toolUse("tc_0_0.0_1")), turn(ua, toolResult("tc_0_0.0_0"), toolResult("tc_0_0.0_1"))},
			wantText: "own 1", wantCalls: []string{"tc_0_0.1_0"}},
		{name: "the parent's ids do not count", parent: "tc_0_0", give: []protocol.Turn{user("x"), turn(as, toolUse("tc_0_0")),
			turn(ua, toolResult("tc_0_0"))}, wantText: "own 1", wantCalls: []string{"tc_0_0.1_0"}},
		{name: "nested", parent: "tc_0_0.0_1", give: []protocol.Turn{user("Nested.")}, wantText: "nested 0"},
		{name: "nested past its end", parent: "tc_0_0.0_1", give: []protocol.Turn{user("Nested."), assistant("nested 0"), user("more")},
			wantText: scripted.FinishedText},
		{name: "without steps replays its agent's", parent: "tc_0_0.1_0", give: []protocol.Turn{user("Replay.")}, wantText: "own 0",
			wantCalls: []string{"tc_0_0.1_0.0_0", "tc_0_0.1_0.0_1"}},
		{name: "empty steps", parent: "tc_0_1", give: []protocol.Turn{user("Say nothing.")}, wantText: scripted.FinishedText},
		{name: "a call that is no Task plays its agent's steps", parent: "tc_0_0.0_0", give: []protocol.Turn{user("?")},
			wantText: "own 0", wantCalls: []string{"tc_0_0.0_0.0_0", "tc_0_0.0_0.0_1"}},
		{name: "a foreign parent plays the top", parent: "toolu_01", give: []protocol.Turn{user("go")}, wantText: "top 0",
			wantCalls: []string{"toolu_01.0_0", "toolu_01.0_1"}},
		{name: "a parent past the steps plays its agent's", parent: "tc_9_0", give: []protocol.Turn{user("go")}, wantText: "top 0",
			wantCalls: []string{"tc_9_0.0_0", "tc_9_0.0_1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(m.Stream(t.Context(), protocol.Request{Messages: tt.give, Parent: tt.parent}))
			assert.Equal(t, tt.wantText, textOf(got))
			var ids []string
			for _, c := range calls(got) {
				ids = append(ids, c.ID)
			}
			assert.Equal(t, tt.wantCalls, ids)
		})
	}
}

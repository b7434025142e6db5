package scripted_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun/fuzzguard"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/transport/scripted"
)

func n64(v int64) *int64 { return &v }

func TestParseScript(t *testing.T) {
	tests := map[string]struct {
		give string
		want []scripted.Step
	}{
		"defaults": {
			give: "steps:\n  - text: hi\n  - tool_calls: [{name: Glob}]\n",
			want: []scripted.Step{
				{Text: "hi", Stop: "end_turn"},
				{ToolCalls: []scripted.ToolCall{{Name: "Glob", Input: "{}"}}, Stop: "tool_use"},
			},
		},
		"input keeps key order and types": {
			give: `steps: [{tool_calls: [{name: W, input: {z: 1, a: "<b>&", f: 2.5, t: true, n: null, l: [x, 2], ` +
				`big: 123456789012345678901234567890, hex: 0x1F, e: 1e3, o: 012, "7": seven, date: 2026-01-02}}]}]`,
			want: []scripted.Step{{
				ToolCalls: []scripted.ToolCall{{Name: "W", Input: `{"z":1,"a":"<b>&","f":2.5,"t":true,"n":null,"l":["x",2],` +
					`"big":123456789012345678901234567890,"hex":31,"e":1e3,"o":10,"7":"seven","date":"2026-01-02"}`}},
				Stop: "tool_use",
			}},
		},
		"usage and stop": {
			give: "steps:\n  - text: no\n    stop: max_tokens\n    usage: {output: 7, cache_read: 3}\n",
			want: []scripted.Step{{Text: "no", Stop: "max_tokens", Usage: &scripted.Usage{Output: n64(7), CacheRead: 3}}},
		},
		"status fault": {
			give: "steps:\n  - text: x\n    fault: {status: 429, retry_after: 1.5, retry_after_ms: 250, times: 3, body: '{}', header: {x-should-retry: 'false'}}\n",
			want: []scripted.Step{{Text: "x", Stop: "end_turn", Fault: &scripted.Fault{
				Kind: scripted.FaultStatus, Times: 3, Status: 429, RetryAfter: 1500 * time.Millisecond,
				RetryAfterPrecise: 250 * time.Millisecond, Body: "{}", Header: map[string]string{"x-should-retry": "false"},
			}}},
		},
		"stream faults": {
			give: "steps:\n  - fault: {cut: true}\n  - fault: {stall: true}\n  - fault: {malformed: true, eof: false}\n" +
				"  - fault: {eof: true}\n  - fault: {error_event: api_error}\n  - fault: {panic: boom}\n  - fault: {status: 500, retry_after: 2s}\n",
			want: []scripted.Step{
				{Stop: "end_turn", Fault: &scripted.Fault{Kind: scripted.FaultCut, Times: 1}},
				{Stop: "end_turn", Fault: &scripted.Fault{Kind: scripted.FaultStall, Times: 1}},
				{Stop: "end_turn", Fault: &scripted.Fault{Kind: scripted.FaultMalformed, Times: 1}},
				{Stop: "end_turn", Fault: &scripted.Fault{Kind: scripted.FaultEOF, Times: 1}},
				{Stop: "end_turn", Fault: &scripted.Fault{Kind: scripted.FaultErrorEvent, Times: 1, ErrorType: "api_error"}},
				{Stop: "end_turn", Fault: &scripted.Fault{Kind: scripted.FaultPanic, Times: 1, Message: "boom"}},
				{Stop: "end_turn", Fault: &scripted.Fault{Kind: scripted.FaultStatus, Times: 1, Status: 500, RetryAfter: 2 * time.Second}},
			},
		},
		"json": {
			give: `{"steps": [{"thinking": "t", "text": "x", "tool_calls": [{"name": "Bash", "input": {"command": "ls"}}]}]}`,
			want: []scripted.Step{{Thinking: "t", Text: "x", ToolCalls: []scripted.ToolCall{{Name: "Bash", Input: `{"command":"ls"}`}}, Stop: "tool_use"}},
		},
		"sub-agent steps": {
			give: "steps:\n  - tool_calls:\n      - name: Task\n        input: {prompt: p}\n        steps:\n          - text: inner\n" +
				"          - tool_calls: [{name: Task, steps: [{text: deeper}]}, {name: Task}, {name: Task, steps: []}, {name: Task, steps: }]\n",
			want: []scripted.Step{{Stop: "tool_use", ToolCalls: []scripted.ToolCall{{Name: "Task", Input: `{"prompt":"p"}`, Steps: []scripted.Step{
				{Text: "inner", Stop: "end_turn"},
				{Stop: "tool_use", ToolCalls: []scripted.ToolCall{
					{Name: "Task", Input: "{}", Steps: []scripted.Step{{Text: "deeper", Stop: "end_turn"}}},
					{Name: "Task", Input: "{}"},
					{Name: "Task", Input: "{}", Steps: []scripted.Step{}},
					{Name: "Task", Input: "{}", Steps: []scripted.Step{}},
				}},
			}}}}},
		},
		"no steps": {
			give: "steps: []\n",
		},
		"null steps": {
			give: "steps:\n",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := scripted.ParseScript("s.yaml", []byte(tt.give))
			require.NoError(t, err)
			assert.Equal(t, "s.yaml", s.Name)
			assert.Equal(t, tt.want, s.Steps)
		})
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := map[string]struct {
		give string
		want string
	}{
		"syntax":              {give: "steps:\n  - text: [\n", want: "s.yaml:2: yaml: line 2: did not find expected node content"},
		"empty":               {give: "", want: "s.yaml: empty script: want a mapping with steps"},
		"not a mapping":       {give: "- a\n", want: "s.yaml:1:1: want a mapping, got a list"},
		"missing steps":       {give: "name: x\n", want: "s.yaml:1:7: name: unknown field (want steps)"},
		"no steps field":      {give: "{}\n", want: "s.yaml:1:1: steps: missing"},
		"steps not a list":    {give: "steps: 3\n", want: "s.yaml:1:8: steps: want a list of steps, got the integer 3"},
		"unknown step key":    {give: "steps:\n  - txt: hi\n", want: "s.yaml:2:10: steps[0].txt: unknown field (want thinking, text, tool_calls, stop, usage or fault)"},
		"duplicate key":       {give: "steps:\n  - text: a\n    text: b\n", want: "s.yaml:3:5: steps[0].text: duplicate field"},
		"text not a string":   {give: "steps:\n  - text: [a]\n", want: "s.yaml:2:11: steps[0].text: want a string, got a list"},
		"unknown stop":        {give: "steps:\n  - stop: done\n", want: `s.yaml:2:11: steps[0].stop: unknown stop reason "done"`},
		"tool_use no calls":   {give: "steps:\n  - stop: tool_use\n", want: "s.yaml:2:5: steps[0].stop: tool_use needs tool_calls"},
		"calls end_turn":      {give: "steps:\n  - {stop: end_turn, tool_calls: [{name: a}]}\n", want: "s.yaml:2:5: steps[0].stop: end_turn with tool_calls: a step with tool calls stops with tool_use"},
		"call without name":   {give: "steps:\n  - tool_calls:\n      - input: {a: 1}\n", want: "s.yaml:3:9: steps[0].tool_calls[0].name: missing"},
		"input not a map":     {give: "steps:\n  - tool_calls: [{name: a, input: [1]}]\n", want: "s.yaml:2:35: steps[0].tool_calls[0].input: want a mapping, got a list"},
		"input inf":           {give: "steps:\n  - tool_calls: [{name: a, input: {x: .inf}}]\n", want: "s.yaml:2:39: steps[0].tool_calls[0].input.x: .inf is not a finite number, which JSON cannot hold"},
		"input dup key":       {give: "steps:\n  - tool_calls: [{name: a, input: {x: 1, x: 2}}]\n", want: `s.yaml:2:42: steps[0].tool_calls[0].input.x: duplicate key "x" (first at 2:36)`},
		"input cyclic alias":  {give: "steps:\n  - tool_calls: [{name: a, input: &x {a: [*x]}}]\n", want: "s.yaml:2:43: steps[0].tool_calls[0].input.a[0]: alias *x refers to a value that contains it"},
		"input local tag":     {give: "steps:\n  - tool_calls: [{name: a, input: {x: !thing y}}]\n", want: "s.yaml:2:39: steps[0].tool_calls[0].input.x: want a JSON value, got a value tagged !thing"},
		"input list key":      {give: "steps:\n  - tool_calls: [{name: a, input: {[1]: 2}}]\n", want: "s.yaml:2:36: steps[0].tool_calls[0].input: a JSON object key must be a scalar, got a list"},
		"negative usage":      {give: "steps:\n  - usage: {input: -1}\n", want: "s.yaml:2:20: steps[0].usage.input: want a non-negative integer, got -1"},
		"usage float":         {give: "steps:\n  - usage: {output: 1.5}\n", want: "s.yaml:2:21: steps[0].usage.output: want an integer, got the number 1.5"},
		"unknown usage":       {give: "steps:\n  - usage: {cached: 1}\n", want: "s.yaml:2:21: steps[0].usage.cached: unknown field (want input, output, cache_read or cache_creation)"},
		"fault empty":         {give: "steps:\n  - fault: {}\n", want: "s.yaml:2:12: steps[0].fault: want one of status, cut, stall, malformed, eof, error_event or panic"},
		"fault two kinds":     {give: "steps:\n  - fault: {cut: true, eof: true}\n", want: "s.yaml:2:29: steps[0].fault.eof: a fault has one kind, already cut"},
		"fault bad status":    {give: "steps:\n  - fault: {status: 200}\n", want: "s.yaml:2:21: steps[0].fault.status: want an HTTP error status (400 to 599), got 200"},
		"fault times zero":    {give: "steps:\n  - fault: {cut: true, times: 0}\n", want: "s.yaml:2:31: steps[0].fault.times: want at least 1"},
		"retry_after bad":     {give: "steps:\n  - fault: {status: 429, retry_after: soon}\n", want: `s.yaml:2:39: steps[0].fault.retry_after: want a duration such as "1s" or a number, got "soon"`},
		"header on cut":       {give: "steps:\n  - fault: {cut: true, header: {a: b}}\n", want: "s.yaml:2:32: steps[0].fault.header: only a status fault takes this field, not cut"},
		"cut not bool":        {give: "steps:\n  - fault: {cut: yes please}\n", want: `s.yaml:2:18: steps[0].fault.cut: want true or false, got the string "yes please"`},
		"empty error_event":   {give: "steps:\n  - fault: {error_event: ''}\n", want: "s.yaml:2:26: steps[0].fault.error_event: want an error type such as overloaded_error"},
		"unknown fault key":   {give: "steps:\n  - fault: {drop: true}\n", want: "s.yaml:2:19: steps[0].fault.drop: unknown field (want status, cut, stall, malformed, eof, error_event, panic, times, retry_after, retry_after_ms, body or header)"},
		"steps on a non-Task": {give: "steps:\n  - tool_calls: [{name: Read, steps: []}]\n", want: "s.yaml:2:38: steps[0].tool_calls[0].steps: only a Task call starts a sub-agent with steps of its own, not Read"},
		"sub-agent steps":     {give: "steps:\n  - tool_calls: [{name: Task, steps: 1}]\n", want: "s.yaml:2:38: steps[0].tool_calls[0].steps: want a list of steps, got the integer 1"},
		"in a sub-agent":      {give: "steps:\n  - tool_calls:\n      - name: Task\n        steps:\n          - {text: a, txt: b}\n", want: "s.yaml:5:28: steps[0].tool_calls[0].steps[0].txt: unknown field (want thinking, text, tool_calls, stop, usage or fault)"},
		"unknown call key":    {give: "steps:\n  - tool_calls: [{name: a, args: {}}]\n", want: "s.yaml:2:34: steps[0].tool_calls[0].args: unknown field (want name, input or steps)"},
		"json position":       {give: "{\"steps\": [\n  {\"stop\": 1}\n]}\n", want: "s.yaml:2:12: steps[0].stop: want a string, got the integer 1"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := scripted.ParseScript("s.yaml", []byte(tt.give))
			require.Error(t, err)
			var se *scripted.ScriptError
			require.True(t, errors.As(err, &se), "error %T is not a *ScriptError", err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestParseScriptAliasBomb(t *testing.T) {
	t.Parallel()
	// Ten levels of ten aliases each would expand to 10^10 nodes.
	give := "steps:\n  - tool_calls:\n      - name: a\n        input:\n          l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 10; i++ {
		prev := fmt.Sprintf("*l%d", i-1)
		give += fmt.Sprintf("          l%d: &l%d [%s]\n", i, i, strings.Repeat(prev+", ", 9)+prev)
	}
	_, err := scripted.ParseScript("bomb.yaml", []byte(give))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too large")
}

func TestLoadScript(t *testing.T) {
	files, err := filepath.Glob("testdata/scripts/*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := scripted.LoadScript(f)
			require.NoError(t, err)
			assert.Equal(t, f, s.Name)
			require.NotEmpty(t, s.Steps)
			for _, st := range s.Steps {
				for _, c := range st.ToolCalls {
					assert.True(t, json.Valid([]byte(c.Input)), "input %s", c.Input)
				}
			}
		})
	}
	_, err = scripted.LoadScript(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestLoadScriptAnchors(t *testing.T) {
	s, err := scripted.LoadScript("testdata/scripts/anchors.yaml")
	require.NoError(t, err)
	require.Len(t, s.Steps, 1)
	want := `{"path":"notes/café.md","content":"# Menu\nCrème brûlée — 6 €","tags":["a","b"],"meta":{"draft":false,"n":31,"f":1.25,"none":null}}`
	require.Len(t, s.Steps[0].ToolCalls, 2)
	assert.Equal(t, want, s.Steps[0].ToolCalls[0].Input)
	assert.Equal(t, want, s.Steps[0].ToolCalls[1].Input)
}

func FuzzParseScript(f *testing.F) {
	files, err := filepath.Glob("testdata/scripts/*")
	require.NoError(f, err)
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzguard.Run(len(data), func() {
			s, err := scripted.ParseScript("fuzz", data)
			if err != nil {
				var se *scripted.ScriptError
				if !errors.As(err, &se) {
					t.Fatalf("error %T is not a *ScriptError: %v", err, err)
				}
				return
			}
			checkSteps(t, s.Steps)
		})
	})
}

// checkSteps fails on a step that ParseScript should not have let through, at any
// depth of sub-agents.
func checkSteps(t *testing.T, steps []scripted.Step) {
	for _, st := range steps {
		if st.Stop == "" {
			t.Fatal("step without stop reason")
		}
		for _, c := range st.ToolCalls {
			if c.Name == "" || !json.Valid([]byte(c.Input)) {
				t.Fatalf("bad tool call %+v", c)
			}
			if c.Steps != nil && c.Name != scripted.SubAgentTool {
				t.Fatalf("sub-agent steps on a %s call", c.Name)
			}
			checkSteps(t, c.Steps)
		}
		if st.Fault != nil && (st.Fault.Kind == 0 || st.Fault.Times < 1) {
			t.Fatalf("bad fault %+v", st.Fault)
		}
	}
}

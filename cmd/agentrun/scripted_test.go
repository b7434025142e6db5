package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamEvents reads the stream.jsonl of session key under out.
func streamEvents(t *testing.T, out, key string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "sessions", key, "stream.jsonl"))
	require.NoError(t, err)
	return jsonLines(t, string(b))
}

// sessionStatus reads the status and error kind of session key under out.
func sessionStatus(t *testing.T, out, key string) (status, errKind string) {
	t.Helper()
	var res struct {
		Status string
		Error  *struct{ Kind string }
	}
	readJSON(t, filepath.Join(out, "sessions", key, "result.json"), &res)
	if res.Error != nil {
		errKind = res.Error.Kind
	}
	return res.Status, errKind
}

// retrySeen is what a test compares of one retry event: the attempt, the kind of
// failure (the reason up to its first colon), and the delay when the server named it.
type retrySeen struct {
	Attempt int
	Kind    string
	DelayMS int64 // -1 when the delay is the transport's jittered backoff
}

func retries(t *testing.T, evs []map[string]any, exact bool) []retrySeen {
	t.Helper()
	var out []retrySeen
	for _, ev := range evs {
		if ev["type"] != "retry" {
			continue
		}
		reason, _ := ev["reason"].(string)
		kind, _, _ := strings.Cut(reason, ":")
		r := retrySeen{Attempt: int(ev["attempt"].(float64)), Kind: kind, DelayMS: -1}
		if exact {
			r.DelayMS = int64(ev["delay_ms"].(float64))
		}
		out = append(out, r)
	}
	return out
}

// TestScriptedFaultsInProcessAndOverHTTP plays each fault on the in-process scripted
// model and through `agentrun fake-server`, and checks that both are retried, or not,
// alike: the same retry events and the same outcome.
func TestScriptedFaultsInProcessAndOverHTTP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault string
		// exact says the retry delay is the server's (retry-after), not the backoff's.
		exact       bool
		wantRetries []retrySeen
		wantStatus  string
		wantErr     string
	}{
		{name: "429 with retry-after-ms", fault: "{status: 429, retry_after_ms: 40}", exact: true,
			wantRetries: []retrySeen{{1, "http_429", 40}}, wantStatus: "success"},
		{name: "529 twice", fault: "{status: 529, retry_after_ms: 20, times: 2}", exact: true,
			wantRetries: []retrySeen{{1, "overloaded", 20}, {2, "overloaded", 20}}, wantStatus: "success"},
		{name: "503 the server says not to retry", fault: `{status: 503, header: {x-should-retry: "false"}}`,
			wantStatus: "error_provider", wantErr: "server"},
		{name: "400 is not retried", fault: "{status: 400}", wantStatus: "error_request", wantErr: "request"},
		{name: "overloaded error event", fault: "{error_event: overloaded_error}",
			wantRetries: []retrySeen{{1, "overloaded", -1}}, wantStatus: "success"},
		{name: "cut", fault: "{cut: true}", wantRetries: []retrySeen{{1, "network", -1}}, wantStatus: "success"},
	}
	srvScript := t.TempDir()
	var scripts []string
	for i, tt := range tests {
		name := "fault" + string(rune('a'+i))
		path := writeFile(t, srvScript, name+".yaml", faultScript(tt.fault))
		scripts = append(scripts, name+"="+path)
	}
	url := startFakeServer(t, scripts)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := "fault" + string(rune('a'+i))
			for _, over := range []string{"in-process", "fake-server"} {
				dir := t.TempDir()
				writeFile(t, dir, "fault.yaml", faultScript(tt.fault))
				writeFile(t, dir, "ws/README.md", "# ws\n")
				spec := writeFile(t, dir, "jobs.yaml", `version: 1
defaults: {script: fault.yaml, model: `+model+`, workspace: {dir: ws, mode: copy}, tools: [Read]}
jobs:
  - {id: fault, prompt: Read the README.}
`)
				out := filepath.Join(dir, "out")
				env := baseEnv(t)
				if over == "fake-server" {
					env = baseEnv(t, "ANTHROPIC_BASE_URL="+url)
				}
				o := agentrun(t, invocation{args: []string{"run", spec, "--out", out}, env: env})
				require.Contains(t, []int{0, 1}, o.code, o.stderr)
				status, errKind := sessionStatus(t, out, "fault")
				assert.Equal(t, tt.wantStatus, status, over)
				assert.Equal(t, tt.wantErr, errKind, over)
				assert.Equal(t, tt.wantRetries, retries(t, streamEvents(t, out, "fault"), tt.exact), over)
			}
		})
	}
}

// faultScript fails its first step with fault, then reads the README and answers.
func faultScript(fault string) string {
	return "steps:\n  - text: Reading the README.\n    tool_calls: [{name: Read, input: {path: README.md}}]\n" +
		"    fault: " + fault + "\n  - text: The README is read.\n"
}

// sessionStatuses reads the status of every session of a run's summary.json.
func sessionStatuses(t *testing.T, out string) map[string]string {
	t.Helper()
	var sum struct {
		Sessions []struct{ Key, Status string }
	}
	readJSON(t, filepath.Join(out, "summary.json"), &sum)
	got := map[string]string{}
	for _, s := range sum.Sessions {
		got[s.Key] = s.Status
	}
	return got
}

// TestFakeServerQuickStart runs the README's quick start against `agentrun fake-server
// --spec`, which plays each session its job's script: all three sessions succeed, as
// they do on the in-process model.
func TestFakeServerQuickStart(t *testing.T) {
	spec, err := filepath.Abs(filepath.Join("..", "..", "examples", "quickstart.yaml"))
	require.NoError(t, err)
	url := startFakeServerArgs(t, "--spec", spec)
	out := filepath.Join(t.TempDir(), "out")
	o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--progress", "off"},
		env: baseEnv(t, "ANTHROPIC_BASE_URL="+url)})
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	assert.Equal(t, map[string]string{"add-farewell": "success", "fix-initials": "success", "document-initials": "success"},
		sessionStatuses(t, out))
	evs := streamEvents(t, out, "add-farewell")
	assert.Equal(t, "anthropic", evs[0]["provider"], "the sessions ran over HTTP")
}

// finalTexts reads the final answer of every session of a run.
func finalTexts(t *testing.T, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for key := range sessionStatuses(t, out) {
		var res struct{ Result string }
		readJSON(t, filepath.Join(out, "sessions", key, "result.json"), &res)
		got[key] = res.Result
	}
	return got
}

// TestFakeServerSessionScripts runs a spec whose sessions share model names (a model
// matrix, and a job on the default model) or differ only by their script (a matrix over
// script), in process and against `agentrun fake-server --spec`: every session plays
// its own script either way.
func TestFakeServerSessionScripts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "ws/README.md", "# ws\n")
	for _, name := range []string{"greet", "review", "one", "two"} {
		writeFile(t, dir, name+".yaml", "steps:\n  - tool_calls: [{name: Read, input: {path: README.md}}]\n  - text: This is "+name+".\n")
	}
	spec := writeFile(t, dir, "jobs.yaml", `version: 1
defaults: {workspace: {dir: ws, mode: copy}, tools: [Read]}
jobs:
  - {id: greet, prompt: Greet., script: greet.yaml, matrix: {model: [claude-sonnet-4-6, gpt-5.4]}, repeat: 2}
  - {id: review, prompt: Review., script: review.yaml}
  - {id: vary, prompt: Vary., matrix: {script: [one.yaml, two.yaml]}}
`)
	want := map[string]string{
		"greet+model=claude-sonnet-4-6.r1": "This is greet.", "greet+model=claude-sonnet-4-6.r2": "This is greet.",
		"greet+model=gpt-5.4.r1": "This is greet.", "greet+model=gpt-5.4.r2": "This is greet.",
		"review": "This is review.", "vary+script=one.yaml": "This is one.", "vary+script=two.yaml": "This is two.",
	}
	url := startFakeServerArgs(t, "--spec", spec)
	for _, over := range []string{"in-process", "fake-server"} {
		t.Run(over, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			env := baseEnv(t)
			if over == "fake-server" {
				env = baseEnv(t, "ANTHROPIC_BASE_URL="+url)
			}
			o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--progress", "off"}, env: env})
			require.Equal(t, 0, o.code, o.stderr)
			assert.Equal(t, want, finalTexts(t, out))
		})
	}
}

func TestFakeServerSpecErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", "steps:\n  - text: a\n")
	writeFile(t, dir, "b.yaml", "steps:\n  - txt: b\n")
	writeFile(t, dir, "c.yaml", "steps:\n  - text: c\n")
	one := writeFile(t, dir, "one.yaml", "version: 1\njobs:\n  - {id: j, prompt: p, script: a.yaml}\n")
	other := writeFile(t, dir, "other/one.yaml", "version: 1\njobs:\n  - {id: j, prompt: p, script: ../c.yaml}\n")
	bad := writeFile(t, dir, "bad.yaml", "version: 1\njobs:\n  - {id: j, prompt: p, script: b.yaml}\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no such spec", args: []string{"--spec", filepath.Join(dir, "missing.yaml")}, want: "missing.yaml"},
		{name: "a broken script", args: []string{"--spec", bad}, want: "b.yaml:2:10: steps[0].txt: unknown field"},
		{name: "one session, two scripts", args: []string{"--spec", one, "--spec", one, "--spec", other},
			want: "session j is in both " + one + " and " + other + " with different scripts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := agentrun(t, invocation{args: append([]string{"fake-server", "--addr", "127.0.0.1:0"}, tt.args...)})
			assert.Equal(t, 2, o.code)
			assert.Contains(t, o.stderr, tt.want)
		})
	}
}

// nestedScript delegates to a sub-agent with steps of its own, which delegates to one
// more with steps of its own.
const nestedScript = `steps:
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
`

// TestNestedTaskIDs runs nested Task calls in process and against fake-server, and
// checks in stream.jsonl that every tool call has an id of its own and that each
// sub-agent's events name its own Task call in parent_tool_use_id.
func TestNestedTaskIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "ws/README.md", "# ws\n")
	writeFile(t, dir, "nested.yaml", nestedScript)
	spec := writeFile(t, dir, "jobs.yaml", `version: 1
defaults: {workspace: {dir: ws, mode: copy}, tools: [Read, Task], script: nested.yaml}
jobs:
  - {id: nested, prompt: Start.}
`)
	url := startFakeServerArgs(t, "--spec", spec)
	for _, over := range []string{"in-process", "fake-server"} {
		t.Run(over, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			env := baseEnv(t)
			if over == "fake-server" {
				env = baseEnv(t, "ANTHROPIC_BASE_URL="+url)
			}
			o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--progress", "off"}, env: env})
			require.Equal(t, 0, o.code, o.stderr)
			evs := streamEvents(t, out, "nested")
			ids := map[string]string{} // tool call id → its parent_tool_use_id
			var tasks []string
			var starts []string
			texts := map[string]string{} // the text of each parent's stop, by parent
			text := map[string]string{}
			for _, ev := range evs {
				parent, _ := ev["parent_tool_use_id"].(string)
				switch ev["type"] {
				case "tool_call":
					id := ev["id"].(string)
					_, dup := ids[id]
					assert.False(t, dup, "tool call id %s is used twice", id)
					ids[id] = parent
					if ev["name"] == "Task" {
						tasks = append(tasks, id)
					}
				case "sub_agent_start":
					starts = append(starts, parent)
				case "text":
					text[parent] += ev["content"].(string)
				case "stop":
					texts[parent] += text[parent] + "|"
					delete(text, parent)
				}
			}
			assert.Equal(t, []string{"tc_0_0", "tc_0_0.0_0"}, tasks)
			assert.Equal(t, tasks, starts, "each sub-agent names its own Task call")
			assert.Equal(t, map[string]string{"tc_0_0": "", "tc_0_0.0_0": "tc_0_0", "tc_0_0.0_0.0_0": "tc_0_0.0_0"}, ids)
			assert.Equal(t, map[string]string{"": "Delegating.|All done.|", "tc_0_0": "Passing the inner part on.|Outer done.|",
				"tc_0_0.0_0": "|Inner done.|"}, texts)
		})
	}
}

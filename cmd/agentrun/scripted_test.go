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

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/agentrun/agentrun/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExecIsARunOfOneSession runs the same scripted session through exec and through
// run: their result.json, events.jsonl, stream.jsonl, transcript.txt and messages.jsonl
// must say the same, ids and times aside, since both are one session of the runner.
func TestExecIsARunOfOneSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	writeFile(t, ws, "README.md", "# workspace\n")
	script := writeFile(t, dir, "steps.yaml", `steps:
  - text: Reading the README.
    tool_calls:
      - name: Bash
        input: {command: cat README.md}
  - text: It is a workspace.
`)
	const prompt = "Read the README."
	spec := writeFile(t, dir, "jobs.yaml", `version: 1
jobs:
  - id: readme
    prompt: `+prompt+`
    script: steps.yaml
    workspace: {dir: ws, mode: shared}
    sandbox: {level: "off"}
`)
	out := filepath.Join(dir, "out")
	o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--progress", "off"}, dir: dir})
	require.Equal(t, 0, o.code, o.stderr)
	runDir := filepath.Join(out, "sessions", "readme")

	env := baseEnv(t)
	o = agentrun(t, invocation{args: []string{"exec", "--script", script, "--sandbox", "off", "--session", "same",
		"--cwd", ws, prompt}, env: env, dir: dir})
	require.Equal(t, 0, o.code, o.stderr)
	execDir := filepath.Join(projectDir(t, env), "same")

	for _, name := range []string{"result.json", "events.jsonl", "stream.jsonl", "messages.jsonl"} {
		t.Run(name, func(t *testing.T) {
			want := meaningOf(t, filepath.Join(runDir, name))
			require.NotEmpty(t, want)
			assert.Equal(t, want, meaningOf(t, filepath.Join(execDir, name)))
		})
	}
	t.Run("transcript.txt", func(t *testing.T) {
		want, err := os.ReadFile(filepath.Join(runDir, "transcript.txt"))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(execDir, "transcript.txt"))
		require.NoError(t, err)
		assert.Equal(t, transcriptMeaning(string(want)), transcriptMeaning(string(got)))
	})
}

// idsAndTimes are the fields in which two runs of one session may differ.
var idsAndTimes = map[string]bool{"session_id": true, "job_id": true, "key": true, "spec_digest": true,
	"seq": true, "ts": true, "duration_ms": true, "duration_api_ms": true}

// meaningOf reads a JSON or JSON lines file with the ids and times left out.
func meaningOf(t *testing.T, path string) []any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	for dec.More() {
		var v any
		require.NoError(t, dec.Decode(&v), path)
		out = append(out, withoutIDs(v))
	}
	return out
}

func withoutIDs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if idsAndTimes[k] {
				delete(x, k)
				continue
			}
			x[k] = withoutIDs(e)
		}
	case []any:
		for i, e := range x {
			x[i] = withoutIDs(e)
		}
	}
	return v
}

// transcriptMeaning is a transcript without its header line (which names the session
// and the job) and its timings.
func transcriptMeaning(s string) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > 0 {
		lines = lines[1:]
	}
	for i, l := range lines {
		lines[i] = elapsed.ReplaceAllString(l, "· (time) ·")
	}
	return lines
}

// elapsed is a duration between two separators of a transcript line.
var elapsed = regexp.MustCompile(`· [0-9][0-9.hms]* ·`)

// silentScript runs a tool that prints nothing for half a minute.
const silentScript = `steps:
  - tool_calls: [{name: Bash, input: {command: "sleep 30"}}]
  - text: Never reached.
`

// TestExecEndsOnSignalOrSilence checks the two ends exec shares with run: SIGTERM ends
// the session cancelled with exit 130, and a session silent for its idle timeout ends
// inactive with exit 1, its result written to stdout and to result.json either way.
func TestExecEndsOnSignalOrSilence(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		flags      []string
		signal     bool
		wantCode   int
		wantStatus protocol.Status
	}{
		"SIGTERM":      {signal: true, wantCode: exitInterrupted, wantStatus: protocol.StatusCancelled},
		"idle timeout": {flags: []string{"--idle-timeout", "1s"}, wantCode: 1, wantStatus: protocol.StatusInactivity},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir, env, script := execSetup(t, silentScript)
			args := append([]string{"exec", "--script", script, "--cwd", dir, "--sandbox", "off", "--session", "quiet",
				"--output-format", "stream-json"}, tt.flags...)
			cmd, stdout, stderr := startAgentrun(t, env, append(args, "Wait.")...)
			if tt.signal {
				waitFor(t, "the tool to start", func() bool {
					b, _ := os.ReadFile(filepath.Join(projectDirOf(env), "quiet", "events.jsonl"))
					return strings.Contains(string(b), `"type":"tool_call"`)
				})
				require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			}
			code := exitCode(t, cmd)
			assert.Equal(t, tt.wantCode, code, stderr.String())
			lines := jsonLines(t, stdout.String())
			assert.Equal(t, string(tt.wantStatus), lines[len(lines)-1]["status"], "the result on stdout")
			var res protocol.Result
			readJSON(t, filepath.Join(projectDir(t, env), "quiet", "result.json"), &res)
			assert.Equal(t, tt.wantStatus, res.Status)
		})
	}
}

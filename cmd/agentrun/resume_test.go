package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowSpec is n sessions of one job, two at a time, each running `sleep pause` in Bash.
func slowSpec(t *testing.T, n int, pause string) (spec, out string) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "slow.yaml", `steps:
  - tool_calls:
      - name: Bash
        input: {command: sleep `+pause+`}
  - text: Slept.
`)
	writeFile(t, dir, "ws/README.md", "# workspace\n")
	spec = writeFile(t, dir, "jobs.yaml", `version: 1
concurrency: 2
defaults:
  script: slow.yaml
  workspace: {dir: ws, mode: copy}
jobs:
  - id: nap
    prompt: Session {{ .repeat }}.
    repeat: `+strconv.Itoa(n)+`
`)
	return spec, filepath.Join(dir, "out")
}

// waitFor polls the filesystem (the run is another process) until cond holds, failing
// the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
		<-tick.C
	}
}

// results reads every session's result.json in out: key → session_id and status.
func results(t *testing.T, out string) map[string][2]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(out, "sessions", "*", "result.json"))
	require.NoError(t, err)
	got := map[string][2]string{}
	for _, f := range files {
		var r struct {
			SessionID string `json:"session_id"`
			Status    string `json:"status"`
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &r), f)
		got[filepath.Base(filepath.Dir(f))] = [2]string{r.SessionID, r.Status}
	}
	return got
}

// startRun starts `agentrun run` in the background.
func startRun(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(agentrunBin(t), append([]string{"run"}, args...)...)
	cmd.Env = baseEnv(t)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, &stderr
}

// TestResumeAfterKill kills a run midway with SIGKILL and resumes it: only the missing
// sessions run, the finished ones keep their results, and the summary has every
// session exactly once.
func TestResumeAfterKill(t *testing.T) {
	const n = 20
	spec, out := slowSpec(t, n, "0.3")
	cmd, _ := startRun(t, spec, "--out", out, "--progress", "off")
	waitFor(t, "three finished sessions", func() bool { return len(results(t, out)) >= 3 })
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait() // killed: the error only says so
	before := results(t, out)
	require.Less(t, len(before), n, "the kill came before the end of the run")
	assert.NoFileExists(t, filepath.Join(out, "summary.json"), "a killed run writes no summary")

	o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--resume", "--progress", "off"}})
	require.Equal(t, 0, o.code, o.stderr)

	var sum struct {
		Totals   struct{ Sessions, Passed, Reused int }
		Sessions []struct {
			Key       string `json:"key"`
			SessionID string `json:"session_id"`
			Status    string `json:"status"`
			Reused    bool   `json:"reused"`
		}
	}
	readJSON(t, filepath.Join(out, "summary.json"), &sum)
	assert.Equal(t, n, sum.Totals.Sessions)
	assert.Equal(t, n, sum.Totals.Passed)
	seen := map[string]int{}
	for _, row := range sum.Sessions {
		seen[row.Key]++
		prev, had := before[row.Key]
		if had && prev[1] == "success" {
			assert.True(t, row.Reused, "%s finished before the kill and is not run again", row.Key)
			assert.Equal(t, prev[0], row.SessionID, "%s keeps its result", row.Key)
		} else {
			assert.False(t, row.Reused, row.Key)
		}
	}
	require.Len(t, seen, n)
	for key, count := range seen {
		assert.Equal(t, 1, count, "%s is in the summary once", key)
	}
	after := results(t, out)
	for key, prev := range before {
		if prev[1] == "success" {
			assert.Equal(t, prev, after[key], "result.json of %s is untouched", key)
		}
	}
	for key := range seen {
		stream, err := os.ReadFile(filepath.Join(out, "sessions", key, "stream.jsonl"))
		require.NoError(t, err)
		evs := jsonLines(t, string(stream))
		assert.Equal(t, "session_start", evs[0]["type"], key)
		assert.Equal(t, "result", evs[len(evs)-1]["type"], key)
		assert.Equal(t, 1, strings.Count(string(stream), `{"type":"result"`), key)
	}
	t.Logf("%d of %d sessions had finished before the kill", len(before), n)
}

// TestRunInterrupt sends SIGINT to a run: it stops starting sessions, cancels the
// running ones, writes every result and the summaries, and exits 130 within seconds.
func TestRunInterrupt(t *testing.T) {
	const n = 6
	spec, out := slowSpec(t, n, "30")
	cmd, stderr := startRun(t, spec, "--out", out, "--progress", "off")
	waitFor(t, "a running tool", func() bool {
		b, err := os.ReadFile(filepath.Join(out, "sessions", "nap.r1", "stream.jsonl"))
		return err == nil && bytes.Contains(b, []byte(`"type":"tool_call"`))
	})
	sent := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, stderr.String())
	assert.Equal(t, 130, ee.ExitCode(), stderr.String())
	assert.Less(t, time.Since(sent), 10*time.Second, "the run stops within the ten seconds CI gives")

	got := results(t, out)
	require.Len(t, got, n, "every session has a result")
	for key, r := range got {
		assert.Equal(t, "cancelled", r[1], key)
	}
	var sum struct {
		Totals struct{ Sessions, Failed int }
	}
	readJSON(t, filepath.Join(out, "summary.json"), &sum)
	assert.Equal(t, n, sum.Totals.Sessions)
	assert.Equal(t, n, sum.Totals.Failed)
}

package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noteScript writes note.txt, shows it with Bash and answers.
const noteScript = `steps:
  - text: Writing the note.
    tool_calls:
      - name: Write
        input: {path: note.txt, content: "hello from agentrun\n"}
  - tool_calls:
      - name: Bash
        input: {command: cat note.txt}
  - text: The note says hello.
`

// smallSpec is three sessions (one job, and one repeated twice) in copies of ws; check
// is the shell command that decides the write job.
func smallSpec(check string) string {
	return `version: 1
concurrency: 2
defaults:
  script: steps.yaml
  workspace: {dir: ws, mode: copy}
jobs:
  - id: write
    prompt: Write a note.
    checks:
      - {name: note, run: '` + check + `'}
  - id: look
    prompt: Look at the note, attempt {{ .repeat }}.
    repeat: 2
`
}

// specDir writes a spec with the note script and an empty workspace into a fresh
// folder and returns the spec's path.
func specDir(t *testing.T, spec string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "steps.yaml", noteScript)
	writeFile(t, dir, "ws/README.md", "# workspace\n")
	return writeFile(t, dir, "jobs.yaml", spec)
}

var sessionFiles = []string{"stream.jsonl", "events.jsonl", "transcript.txt", "messages.jsonl", "result.json"}

// TestRunStreamJSON checks that stream-json stdout holds nothing but JSON lines, each
// with session_id and job_id, that every session opens with session_start and closes
// with exactly one result, and that stdout carries each session's whole stream.
func TestRunStreamJSON(t *testing.T) {
	t.Parallel()
	spec := specDir(t, smallSpec("grep -q hello note.txt"))
	out := filepath.Join(filepath.Dir(spec), "out")
	o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--output-format", "stream-json"}})
	require.Equal(t, 0, o.code, o.stderr)

	bySession := map[string][]map[string]any{}
	var order []string
	for _, ev := range jsonLines(t, o.stdout) {
		id, _ := ev["session_id"].(string)
		job, _ := ev["job_id"].(string)
		require.NotEmpty(t, id, "event without session_id: %v", ev)
		require.NotEmpty(t, job, "event without job_id: %v", ev)
		if _, ok := bySession[id]; !ok {
			order = append(order, id)
		}
		bySession[id] = append(bySession[id], ev)
	}
	require.Len(t, bySession, 3)
	for _, id := range order {
		evs := bySession[id]
		assert.Equal(t, "session_start", evs[0]["type"], id)
		last := evs[len(evs)-1]
		assert.Equal(t, "result", last["type"], id)
		assert.Equal(t, "success", last["status"], id)
		results := 0
		for _, ev := range evs {
			if ev["type"] == "result" {
				results++
			}
			assert.Equal(t, evs[0]["job_id"], ev["job_id"])
		}
		assert.Equal(t, 1, results, id)

		key, _ := last["key"].(string)
		require.NotEmpty(t, key)
		stream, err := os.ReadFile(filepath.Join(out, "sessions", key, "stream.jsonl"))
		require.NoError(t, err)
		assert.Len(t, jsonLines(t, string(stream)), len(evs), "stdout carries all of %s's stream", key)
	}
	assert.Contains(t, o.stderr, "using the built-in scripted model", "progress and logs go to stderr")
}

// TestRunText checks the text stdout: every session line prefixed by its key, then the
// summary table and headline; and the artifacts of every session.
func TestRunText(t *testing.T) {
	t.Parallel()
	spec := specDir(t, smallSpec("grep -q hello note.txt"))
	out := filepath.Join(filepath.Dir(spec), "out")
	o := agentrun(t, invocation{args: []string{"run", spec, "--out", out}})
	require.Equal(t, 0, o.code, o.stderr)

	body, table, ok := strings.Cut(o.stdout, "\nSESSION ")
	require.True(t, ok, "no summary table in:\n%s", o.stdout)
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		assert.Regexp(t, `^\[(write|look\.r1|look\.r2)\] `, line)
	}
	assert.Contains(t, body, "[write] ⏺ Write(note.txt)")
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	require.Len(t, lines, 6, table)
	assert.Regexp(t, `^STATUS +TURNS +DURATION +COST +CHECKS$`, strings.TrimSpace(lines[0]))
	assert.Regexp(t, `^look\.r1 +success +3 `, lines[1])
	assert.Regexp(t, `^look\.r2 +success +3 `, lines[2])
	assert.Regexp(t, `^write +success +3 .* note:ok$`, lines[3])
	assert.Empty(t, lines[4])
	assert.Regexp(t, `^3 sessions · 3 passed · 0 failed · `, lines[5])

	for _, f := range []string{"run.json", "summary.json", "summary.md", "junit.xml", "run.log"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
	for _, key := range []string{"write", "look.r1", "look.r2"} {
		for _, f := range sessionFiles {
			assert.FileExists(t, filepath.Join(out, "sessions", key, f))
		}
	}
	assert.FileExists(t, filepath.Join(out, "workspaces", "write", "note.txt"))
	assert.NoFileExists(t, filepath.Join(filepath.Dir(spec), "ws", "note.txt"), "copy mode leaves the original alone")
}

// TestRunExitCodes checks the run's exit codes and what summary.json says.
func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		spec       string
		wantCode   int
		wantStatus map[string]string
	}{
		{
			name:       "all pass",
			spec:       smallSpec("grep -q hello note.txt"),
			wantCode:   0,
			wantStatus: map[string]string{"write": "success", "look.r1": "success", "look.r2": "success"},
		},
		{
			name:       "a check fails",
			spec:       smallSpec("grep -q goodbye note.txt"),
			wantCode:   1,
			wantStatus: map[string]string{"write": "error_checks", "look.r1": "success", "look.r2": "success"},
		},
		{
			// The price override makes the scripted model dear, so the first session
			// exhausts the run's budget and the rest are refused.
			name: "run budget exhausted",
			spec: `version: 1
concurrency: 1
budget: {max_cost_usd: 0.01}
prices:
  scripted: {input: 1000, output: 1000}
defaults:
  script: steps.yaml
  workspace: {dir: ws, mode: copy}
jobs:
  - {id: first, prompt: Write a note.}
  - {id: second, prompt: Write a note.}
`,
			wantCode:   4,
			wantStatus: map[string]string{"first": "error_budget", "second": "error_budget"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := specDir(t, tt.spec)
			out := filepath.Join(filepath.Dir(spec), "out")
			o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--progress", "off"}})
			assert.Equal(t, tt.wantCode, o.code, o.stderr)
			var sum struct {
				Sessions []struct{ Key, Status string }
			}
			readJSON(t, filepath.Join(out, "summary.json"), &sum)
			got := map[string]string{}
			for _, r := range sum.Sessions {
				got[r.Key] = r.Status
			}
			assert.Equal(t, tt.wantStatus, got)
		})
	}
}

// TestDryRun checks that --dry-run lists the sessions and runs nothing.
func TestDryRun(t *testing.T) {
	t.Parallel()
	spec := specDir(t, smallSpec("true"))
	out := filepath.Join(filepath.Dir(spec), "out")
	o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--dry-run"}})
	require.Equal(t, 0, o.code, o.stderr)
	assert.Contains(t, o.stdout, ": 3 sessions, 3 selected, concurrency 2\n")
	for _, key := range []string{"write", "look.r1", "look.r2"} {
		assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(key)+` +provider=`, o.stdout)
	}
	assert.Contains(t, o.stdout, "cost ceiling: unbounded")
	assert.NoDirExists(t, out)

	filtered := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--dry-run", "--filter", "look*"}})
	require.Equal(t, 0, filtered.code, filtered.stderr)
	assert.Regexp(t, `(?m)^1 sessions? left out by --filter or --shard$`, filtered.stdout)
	assert.NotRegexp(t, `(?m)^  write `, filtered.stdout)
}

// TestRunLogFiles checks that run.log holds the same prefixed lines as text stdout.
func TestRunLogFiles(t *testing.T) {
	t.Parallel()
	spec := specDir(t, smallSpec("true"))
	out := filepath.Join(filepath.Dir(spec), "out")
	o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--concurrency", "1"}})
	require.Equal(t, 0, o.code, o.stderr)
	log, err := os.ReadFile(filepath.Join(out, "run.log"))
	require.NoError(t, err)
	body, _, _ := strings.Cut(o.stdout, "\nSESSION ")
	assert.Equal(t, strings.TrimSuffix(body, "\n"), strings.TrimSuffix(string(log), "\n"))

	// The transcript of a session is its run.log lines without the prefix.
	transcript, err := os.ReadFile(filepath.Join(out, "sessions", "write", "transcript.txt"))
	require.NoError(t, err)
	var own []string
	sc := bufio.NewScanner(strings.NewReader(string(log)))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "[write] "); ok {
			own = append(own, rest)
		} else if sc.Text() == "[write]" {
			own = append(own, "")
		}
	}
	assert.Equal(t, strings.TrimSuffix(string(transcript), "\n"), strings.Join(own, "\n"))
}

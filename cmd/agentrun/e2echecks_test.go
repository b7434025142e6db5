//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/protocol/eventschema"
)

// The checks of the end-to-end suite on a finished run: its artifacts, its stdout, its
// secrets, and what it left running.

// e2eSession is one session of a finished run, as its artifacts tell it.
type e2eSession struct {
	key    string
	events []protocol.Message // stream.jsonl, in order
	result protocol.Result    // result.json
}

// of returns the session's events of kind k.
func (s e2eSession) of(k protocol.Kind) []protocol.Message {
	var out []protocol.Message
	for _, m := range s.events {
		if m.Kind == k {
			out = append(out, m)
		}
	}
	return out
}

// e2eSummary is the part of summary.json the suite reads.
type e2eSummary struct {
	Totals struct {
		Sessions       int                     `json:"sessions"`
		Reused         int                     `json:"reused"`
		ByStatus       map[protocol.Status]int `json:"by_status"`
		ThrottledMS    int64                   `json:"throttled_ms"`
		ThrottlePauses int                     `json:"throttle_pauses"`
	} `json:"totals"`
	Sessions []e2eRow `json:"sessions"`
}

// e2eRow is one row of summary.json.
type e2eRow struct {
	Key       string          `json:"key"`
	SessionID string          `json:"session_id"`
	Status    protocol.Status `json:"status"`
	Reused    bool            `json:"reused"`
}

// readEventLines parses every line of a stream.jsonl or events.jsonl file strictly: the
// file ends with a newline (no torn line) and each line is an event.
func readEventLines(t *testing.T, path string) ([]protocol.Message, []protocol.Envelope) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(b, []byte("\n")), "%s ends with a torn line", path)
	var msgs []protocol.Message
	var envs []protocol.Envelope
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		m, env, err := protocol.ParseEvent(line)
		require.NoError(t, err, "%s line %d: %q", path, i+1, line)
		msgs = append(msgs, m)
		envs = append(envs, env)
	}
	return msgs, envs
}

// checkStream checks the events of one attempt of a session: session_start first, and
// exactly one result, the last event.
func checkStream(t *testing.T, path string, msgs []protocol.Message) {
	t.Helper()
	require.NotEmpty(t, msgs, path)
	assert.Equal(t, protocol.KindSessionStart, msgs[0].Kind, "%s opens with session_start", path)
	results := 0
	for _, m := range msgs {
		if m.Kind == protocol.KindResult {
			results++
		}
	}
	assert.Equal(t, 1, results, "%s has exactly one result", path)
	assert.Equal(t, protocol.KindResult, msgs[len(msgs)-1].Kind, "%s ends with its result", path)
}

// verifyRun checks the output folder of a finished run of rows sessions and returns
// its sessions by key: summary.json has one row per session, each session's stream.jsonl
// and events.jsonl (of every attempt) parse line by line and hold the same events, the
// last being the one result, equal to result.json and to the summary row.
func verifyRun(t *testing.T, out string, rows int) (map[string]e2eSession, e2eSummary) {
	t.Helper()
	var sum e2eSummary
	readJSON(t, filepath.Join(out, "summary.json"), &sum)
	require.Len(t, sum.Sessions, rows, "summary.json has one row per session")
	assert.Equal(t, rows, sum.Totals.Sessions)
	for _, f := range []string{"run.json", "summary.md", "junit.xml", "run.log"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
	_, err := eventschema.ValidateTree(out)
	assert.NoError(t, err, "every event line matches agentrun schema --events")

	// Every stream of every attempt, earlier whole-session attempts included.
	var streams []string
	err = filepath.WalkDir(filepath.Join(out, "sessions"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "stream.jsonl" {
			streams = append(streams, p)
		}
		return err
	})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(streams), rows)
	for _, stream := range streams {
		msgs, _ := readEventLines(t, stream)
		checkStream(t, stream, msgs)
		events := filepath.Join(filepath.Dir(stream), "events.jsonl")
		logged, envs := readEventLines(t, events)
		require.Len(t, logged, len(msgs), "%s holds the events of stream.jsonl", events)
		for i := range logged {
			assert.Equal(t, int64(i+1), envs[i].Seq, "%s line %d: seq", events, i+1)
			assert.False(t, envs[i].TS.IsZero(), "%s line %d: ts", events, i+1)
		}
		assert.Equal(t, msgs, logged, "%s holds the events of stream.jsonl", events)
	}

	sessions := map[string]e2eSession{}
	for _, row := range sum.Sessions {
		_, dup := sessions[row.Key]
		require.False(t, dup, "%s is in the summary twice", row.Key)
		dir := filepath.Join(out, "sessions", row.Key)
		msgs, _ := readEventLines(t, filepath.Join(dir, "stream.jsonl"))
		var res protocol.Result
		readJSON(t, filepath.Join(dir, "result.json"), &res)
		final := msgs[len(msgs)-1].Final
		require.NotNil(t, final, row.Key)
		assert.JSONEq(t, string(mustJSON(t, res)), string(mustJSON(t, final)), "%s: the result event is result.json", row.Key)
		assert.Equal(t, row.SessionID, res.SessionID, row.Key)
		assert.Equal(t, row.Status, res.Status, row.Key)
		assert.Equal(t, row.Key, res.Key, row.Key)
		sessions[row.Key] = e2eSession{key: row.Key, events: msgs, result: res}
	}
	return sessions, sum
}

// checkStdout checks the stream-json stdout of a run: nothing but events, each with
// session_id and job_id. It returns the session ids whose result it carried.
func checkStdout(t *testing.T, stdout string) map[string]bool {
	t.Helper()
	ended := map[string]bool{}
	if stdout == "" {
		return ended
	}
	for i, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		m, _, err := protocol.ParseEvent([]byte(line))
		require.NoError(t, err, "stdout line %d: %q", i+1, line)
		assert.NoError(t, eventschema.ValidateLine([]byte(line)), "stdout line %d matches the event schema", i+1)
		var ids struct {
			SessionID string `json:"session_id"`
			JobID     string `json:"job_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &ids))
		require.NotEmpty(t, ids.SessionID, "stdout line %d has no session_id", i+1)
		require.NotEmpty(t, ids.JobID, "stdout line %d has no job_id", i+1)
		if m.Kind == protocol.KindResult {
			assert.False(t, ended[ids.SessionID], "%s has two results on stdout", ids.SessionID)
			ended[ids.SessionID] = true
		}
	}
	return ended
}

// assertNoSecrets checks that no secret value appears in any file under out
// (workspaces included) nor in the given process outputs.
func assertNoSecrets(t *testing.T, out string, secrets []string, outputs ...string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, s := range secrets {
			assert.False(t, bytes.Contains(b, []byte(s)), "%s holds a secret", p)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, files, 5*e2eSessions, "the walk read the session files")
	for i, o := range outputs {
		for _, s := range secrets {
			assert.NotContains(t, o, s, "process output %d holds a secret", i)
		}
	}
}

// markerProcesses returns the ids of the running processes whose command line or
// environment holds marker. Zombies, whose environment is gone, do not count.
func markerProcesses(t *testing.T, marker string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f))
			if err == nil && bytes.Contains(b, []byte(marker)) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// assertNoProcesses checks that no process of the run is left.
func assertNoProcesses(t *testing.T, marker string) {
	t.Helper()
	assert.Empty(t, markerProcesses(t, marker), "processes of the run outlived it (marker %s)", marker)
}

package runner_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/protocol/eventschema"
	"github.com/agentrun/agentrun/runner"
)

// junitDoc is what a CI system reads from junit.xml.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Cases []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
			Error   *struct{} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// verifyOut checks the invariants of every run's output folder: the run files exist and
// agree with sum; every session of sum has its five files; every line of every .jsonl
// file parses; each stream ends with its one result event, equal to result.json; and no
// secret appears in any file under out. It returns each session's result.json by key.
func verifyOut(t *testing.T, out string, sum *runner.Summary, secrets ...string) map[string]*protocol.Result {
	t.Helper()
	for _, name := range []string{runner.RunFile, runner.SummaryFile, runner.SummaryMDFile, runner.JUnitFile, runner.RunLogFile} {
		assert.FileExists(t, filepath.Join(out, name))
	}
	var onDisk runner.Summary
	readJSON(t, filepath.Join(out, runner.SummaryFile), &onDisk)
	want, err := json.Marshal(sum)
	require.NoError(t, err)
	got, err := json.Marshal(onDisk)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got), "summary.json is the returned summary")
	assert.Equal(t, len(sum.Sessions), sum.Totals.Sessions)
	assert.Equal(t, sum.Totals.Sessions, sum.Totals.Passed+sum.Totals.Failed)

	var info runner.RunInfo
	readJSON(t, filepath.Join(out, runner.RunFile), &info)
	assert.NotEmpty(t, info.EndedAt, "run.json is completed at the end")
	assert.Equal(t, sum.SpecDigest, info.SpecDigest)

	b, err := os.ReadFile(filepath.Join(out, runner.JUnitFile))
	require.NoError(t, err)
	var junit junitDoc
	require.NoError(t, xml.Unmarshal(b, &junit), "junit.xml parses")
	require.Len(t, junit.Suites, 1)
	assert.Equal(t, len(sum.Sessions), junit.Tests)
	assert.Len(t, junit.Suites[0].Cases, len(sum.Sessions))

	files, err := eventschema.ValidateTree(out)
	assert.NoError(t, err, "every event line matches agentrun schema --events")
	if len(sum.Sessions) > 0 {
		assert.Positive(t, files, "stream.jsonl and events.jsonl files")
	}

	md, err := os.ReadFile(filepath.Join(out, runner.SummaryMDFile))
	require.NoError(t, err)

	results := map[string]*protocol.Result{}
	seen := map[string]bool{}
	for i, row := range sum.Sessions {
		assert.False(t, seen[row.Key], "session %s appears once in the summary", row.Key)
		seen[row.Key] = true
		assert.Equal(t, row.Status != protocol.StatusSuccess, row.IsError, row.Key)
		assert.Equal(t, row.Key, junit.Suites[0].Cases[i].Name)
		assert.Contains(t, string(md), "`"+row.Key+"`")
		results[row.Key] = verifySession(t, filepath.Join(out, runner.SessionsDir, row.Key), row)
	}
	verifyNoSecrets(t, out, secrets)
	return results
}

// verifySession checks one session folder and returns its result.json.
func verifySession(t *testing.T, dir string, row runner.Row) *protocol.Result {
	t.Helper()
	for _, name := range []string{runner.StreamFile, runner.EventsFile, runner.TranscriptFile, runner.MessagesFile, runner.ResultFile} {
		assert.FileExists(t, filepath.Join(dir, name), row.Key)
	}
	var res protocol.Result
	readJSON(t, filepath.Join(dir, runner.ResultFile), &res)
	assert.Equal(t, row.Key, res.Key)
	assert.Equal(t, row.Status, res.Status, row.Key)
	assert.True(t, res.Status.Valid(), "%s: status %q", row.Key, res.Status)
	assert.Equal(t, res.Status != protocol.StatusSuccess, res.IsError, row.Key)
	assert.NotNil(t, res.Checks, "%s: checks is a list, never null", row.Key)
	if !row.Reused {
		assert.Equal(t, row.SessionID, res.SessionID, row.Key)
	}

	streamed := readEvents(t, filepath.Join(dir, runner.StreamFile), false)
	logged := readEvents(t, filepath.Join(dir, runner.EventsFile), true)
	require.NotEmpty(t, streamed, row.Key)
	assert.Equal(t, protocol.KindSessionStart, streamed[0].Kind, "%s: the stream opens with session_start", row.Key)
	assert.Equal(t, len(streamed), len(logged), "%s: events.jsonl holds the stream's events", row.Key)
	for i, m := range streamed {
		if m.Kind == protocol.KindResult {
			assert.Equal(t, len(streamed)-1, i, "%s: one result event, the last line", row.Key)
		}
	}
	last := streamed[len(streamed)-1]
	require.Equal(t, protocol.KindResult, last.Kind, "%s: the stream ends with its result", row.Key)
	assertSameResult(t, &res, last.Final)
	assertSameResult(t, &res, logged[len(logged)-1].Final)

	verifyMessages(t, filepath.Join(dir, runner.MessagesFile))
	return &res
}

// assertSameResult compares a result.json with a result event, the structured output
// by meaning (result.json is indented).
func assertSameResult(t *testing.T, want, got *protocol.Result) {
	t.Helper()
	require.NotNil(t, got)
	w, g := *want, *got
	w.StructuredOutput, g.StructuredOutput = nonNull(w.StructuredOutput), nonNull(g.StructuredOutput)
	if len(w.StructuredOutput) > 0 || len(g.StructuredOutput) > 0 {
		assert.JSONEq(t, string(w.StructuredOutput), string(g.StructuredOutput), want.Key)
	}
	w.StructuredOutput, g.StructuredOutput = nil, nil
	assert.Equal(t, w, g, "%s: result.json equals the result event", want.Key)
}

// readEvents parses every line of a .jsonl event file, with ParseEvent line by line and
// with the EventReader, which must agree. seq must count 1, 2, … when numbered.
func readEvents(t *testing.T, path string, numbered bool) []protocol.Message {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	if len(data) > 0 {
		assert.Equal(t, byte('\n'), data[len(data)-1], "%s ends with a whole line", path)
	}
	var out []protocol.Message
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		m, env, err := protocol.ParseEvent(sc.Bytes())
		require.NoError(t, err, "%s line %d: %s", path, n, sc.Text())
		if numbered {
			assert.Equal(t, int64(n), env.Seq, "%s line %d", path, n)
			assert.False(t, env.TS.IsZero(), "%s line %d has ts", path, n)
		}
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	r := protocol.NewEventReader(bytes.NewReader(data))
	count := 0
	for r.Next() {
		count++
	}
	require.NoError(t, r.Err(), path)
	assert.Equal(t, len(out), count, "%s: EventReader reads every line", path)
	return out
}

// verifyMessages checks that every line of messages.jsonl is a conversation turn.
func verifyMessages(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for n, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		var turn protocol.Turn
		assert.NoError(t, json.Unmarshal([]byte(line), &turn), "%s line %d", path, n+1)
	}
}

// verifyNoSecrets walks every file under out.
func verifyNoSecrets(t *testing.T, out string, secrets []string) {
	t.Helper()
	if len(secrets) == 0 {
		return
	}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			assert.False(t, bytes.Contains(b, []byte(s)), "secret %q in %s", s, p)
		}
		return nil
	})
	require.NoError(t, err)
}

// nonNull is raw, or nil when raw is JSON null.
func nonNull(raw json.RawMessage) json.RawMessage {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	return raw
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), path)
}

// rows indexes a summary's rows by key.
func rows(sum *runner.Summary) map[string]runner.Row {
	out := make(map[string]runner.Row, len(sum.Sessions))
	for _, r := range sum.Sessions {
		out[r.Key] = r
	}
	return out
}

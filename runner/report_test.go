package runner_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/transport/scripted"
)

// textPart and detail mirror the JSON of a session's details in report.html.
type textPart struct {
	Text string `json:"text"`
	Size int    `json:"size"`
	Cut  int    `json:"cut"`
	Tail bool   `json:"tail"`
}

type detail struct {
	Row        runner.Row      `json:"row"`
	Dir        string          `json:"dir"`
	Problems   []string        `json:"problems"`
	Result     *textPart       `json:"result"`
	Structured string          `json:"structured_output"`
	Error      *protocol.Error `json:"error"`
	Checks     []struct {
		Name   string   `json:"name"`
		Passed bool     `json:"passed"`
		Output textPart `json:"output"`
	} `json:"checks"`
	Transcript *textPart `json:"transcript"`
	Tools      []struct {
		Name   string    `json:"name"`
		Input  textPart  `json:"input"`
		Output *textPart `json:"output"`
	} `json:"tools"`
	ToolsOmitted int       `json:"tools_omitted"`
	Patch        *textPart `json:"patch"`
	Edits        []struct {
		Tool string   `json:"tool"`
		Path string   `json:"path"`
		Text textPart `json:"text"`
	} `json:"edits"`
}

var detailBlock = regexp.MustCompile(`<script type="application/octet-stream" id="d(\d+)">([^<]*)</script>`)

// readReport reads out/report.html and unpacks every session's details, as the page
// does: base64url, gzip, JSON. It returns the page and the details JSON, in row order.
func readReport(t testing.TB, out string) (page string, raw []string, details []detail) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, runner.ReportFile))
	require.NoError(t, err)
	for i, m := range detailBlock.FindAllStringSubmatch(string(b), -1) {
		require.Equal(t, strconv.Itoa(i), m[1])
		z, err := base64.RawURLEncoding.DecodeString(m[2])
		require.NoError(t, err, "block %d", i)
		zr, err := gzip.NewReader(bytes.NewReader(z))
		require.NoError(t, err, "block %d", i)
		j, err := io.ReadAll(zr)
		require.NoError(t, err, "block %d", i)
		var d detail
		require.NoError(t, json.Unmarshal(j, &d), "block %d", i)
		raw = append(raw, string(j))
		details = append(details, d)
	}
	return string(b), raw, details
}

// synthetic describes a run written by writeSyntheticRun.
type synthetic struct {
	sessions int
	// transcript and calls size each session: bytes of transcript, tool calls.
	transcript, calls int
	// patch, when set, is every session's changes.patch of that many bytes.
	patch int
	// text is written into every session's transcript, final answer, check output,
	// error and tool calls.
	text string
}

// writeSyntheticRun writes the output folder of a run of s.sessions sessions into out
// as a run would (summary.json, and each session's result.json, events.jsonl,
// transcript.txt and changes.patch) and returns its summary. Sessions of 10 jobs × 2
// models × repeats; about a third fail a check.
func writeSyntheticRun(tb testing.TB, out string, s synthetic) *runner.Summary {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the agent reads main.go and runs go test ./... then edits the handler to return an error " +
		"when the request has no body; the check compiles and the tests pass after one more change to the fixture")
	prose := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(12) == 0 {
				b.WriteString(".\n")
			} else {
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	sum := &runner.Summary{SchemaVersion: runner.SummarySchemaVersion, Spec: "synthetic.yaml", SpecDigest: strings.Repeat("ab", 32),
		SessionsDigest: strings.Repeat("cd", 32), StartedAt: "2026-01-02T03:04:05Z", EndedAt: "2026-01-02T04:04:05Z",
		DurationMS: 3_600_000, Version: "v9.9.9-test"}
	for i := range s.sessions {
		job, model, repeat := fmt.Sprintf("job-%02d", i%10), []string{"alpha", "beta"}[(i/10)%2], i/20+1
		key := fmt.Sprintf("%s+model=%s.r%d", job, model, repeat)
		dir := filepath.Join(out, runner.SessionsDir, key)
		require.NoError(tb, os.MkdirAll(dir, 0o755))
		cost := 0.01 + float64(rng.IntN(100))/1000
		res := protocol.Result{SessionID: fmt.Sprintf("20260102-030405-%08x", i), JobID: job, Key: key, Status: protocol.StatusSuccess,
			Provenance: protocol.Provenance{Provider: "scripted", Model: model, Matrix: map[string]string{"model": model}, Repeat: repeat, Attempt: 1, Version: "v9.9.9-test"},
			NumTurns:   1 + s.calls, DurationMS: int64(2000 + rng.IntN(60000)), TotalCostUSD: &cost, StopReason: "end_turn",
			Usage:  protocol.Usage{Input: int64(5000 + rng.IntN(50000)), Output: int64(500 + rng.IntN(5000))},
			Result: "Done. " + s.text + prose(600), Attempts: 1,
			Checks: []protocol.Check{{Name: "test", Passed: true, Output: "ok  \texample.com/m\t0.01s\n"}}}
		if rng.IntN(3) == 0 {
			res.Status, res.IsError = protocol.StatusChecks, true
			res.Checks = append(res.Checks, protocol.Check{Name: "vet", ExitCode: 1, Output: s.text + "./main.go:12:2: unreachable code\n" + prose(300)})
			res.Error = &protocol.Error{Kind: protocol.ErrChecks, Message: "failed checks: vet " + s.text}
		}
		b, err := json.Marshal(res)
		require.NoError(tb, err)
		require.NoError(tb, os.WriteFile(filepath.Join(dir, runner.ResultFile), b, 0o644))

		var events []byte
		add := func(m protocol.Message) {
			events, err = protocol.AppendEvent(events, m, protocol.Envelope{})
			require.NoError(tb, err)
			events = append(events, '\n')
		}
		add(protocol.Message{Kind: protocol.KindText, Text: "Let me look. " + s.text})
		for c := range s.calls {
			id := fmt.Sprintf("tc_%d", c)
			switch c % 3 {
			case 0:
				in, _ := json.Marshal(map[string]string{"path": "main.go"})
				add(protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Read", ID: id, Input: string(in)}})
				add(protocol.Message{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: id, Name: "Read", Content: prose(2000)}})
			case 1:
				in, _ := json.Marshal(map[string]string{"path": "main.go", "old_string": "return nil", "new_string": "return err " + s.text})
				add(protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Edit", ID: id, Input: string(in)}})
				add(protocol.Message{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: id, Name: "Edit",
					Content: "Edit(main.go) [+1 -1 lines]\n--- main.go\n+++ main.go\n@@ -1,3 +1,3 @@\n-\treturn nil\n+\treturn err " + s.text + "\n"}})
			default:
				in, _ := json.Marshal(map[string]string{"command": "go test ./... " + s.text})
				add(protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", ID: id, Input: string(in)}})
				add(protocol.Message{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: id, Name: "Bash", Content: prose(800), IsError: c%5 == 0}})
			}
		}
		require.NoError(tb, os.WriteFile(filepath.Join(dir, runner.EventsFile), events, 0o644))
		require.NoError(tb, os.WriteFile(filepath.Join(dir, runner.TranscriptFile), []byte(s.text+"\n"+prose(s.transcript)+"\n"+s.text+"\nEND OF TRANSCRIPT"), 0o644))
		if s.patch > 0 {
			patch := "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n-" + s.text + "\n+" + prose(s.patch)
			require.NoError(tb, os.WriteFile(filepath.Join(dir, runner.PatchFile), []byte(patch), 0o644))
		}
		row := runner.Row{Key: key, JobID: job, Provenance: res.Provenance, SessionID: res.SessionID, Status: res.Status,
			IsError: res.IsError, NumTurns: res.NumTurns, DurationMS: res.DurationMS, Usage: res.Usage, CostUSD: res.TotalCostUSD,
			Attempts: 1, Error: res.Error, Sandbox: "strict"}
		for _, c := range res.Checks {
			row.Checks = append(row.Checks, runner.CheckRow{Name: c.Name, Passed: c.Passed})
		}
		sum.Sessions = append(sum.Sessions, row)
	}
	b, err := json.Marshal(sum)
	require.NoError(tb, err)
	require.NoError(tb, os.WriteFile(filepath.Join(out, runner.SummaryFile), b, 0o644))
	return sum
}

// TestReportDetails checks what one session contributes to report.html: everything of
// a small session, and of a large one the end of its transcript, its latest tool calls
// and the start of its patch, each within its limit and marked as cut.
func TestReportDetails(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		run   synthetic
		check func(t *testing.T, d detail)
	}{
		"small": {
			run: synthetic{sessions: 1, transcript: 500, calls: 3},
			check: func(t *testing.T, d detail) {
				require.NotNil(t, d.Transcript)
				assert.Zero(t, d.Transcript.Cut)
				assert.True(t, strings.HasSuffix(d.Transcript.Text, "END OF TRANSCRIPT"))
				assert.Len(t, d.Tools, 3)
				assert.Zero(t, d.ToolsOmitted)
				assert.Equal(t, []string{"Read", "Edit", "Bash"}, []string{d.Tools[0].Name, d.Tools[1].Name, d.Tools[2].Name})
				assert.Contains(t, d.Tools[1].Input.Text, `"old_string": "return nil"`, "the input indented")
				assert.Nil(t, d.Patch)
				require.Len(t, d.Edits, 1, "the Edit call stands for the changes")
				assert.Equal(t, "Edit", d.Edits[0].Tool)
				assert.Equal(t, "main.go", d.Edits[0].Path)
				assert.Contains(t, d.Edits[0].Text.Text, "+\treturn err")
				require.NotNil(t, d.Result)
				assert.True(t, strings.HasPrefix(d.Result.Text, "Done."))
				assert.Equal(t, "sessions/"+d.Row.Key, d.Dir)
				assert.Empty(t, d.Problems)
			},
		},
		"large": {
			run: synthetic{sessions: 1, transcript: 200 << 10, calls: 300, patch: 100 << 10},
			check: func(t *testing.T, d detail) {
				require.NotNil(t, d.Transcript)
				assert.True(t, d.Transcript.Tail)
				assert.LessOrEqual(t, len(d.Transcript.Text), 12<<10)
				assert.Greater(t, d.Transcript.Cut, 180<<10)
				assert.Equal(t, d.Transcript.Size, d.Transcript.Cut+len(d.Transcript.Text))
				assert.True(t, strings.HasSuffix(d.Transcript.Text, "END OF TRANSCRIPT"), "the end is kept")
				assert.Greater(t, d.ToolsOmitted, 250)
				assert.Equal(t, 300, d.ToolsOmitted+len(d.Tools))
				size := 0
				for _, c := range d.Tools {
					size += len(c.Input.Text)
					if c.Output != nil {
						size += len(c.Output.Text)
						assert.LessOrEqual(t, len(c.Output.Text), 1<<10)
					}
				}
				assert.LessOrEqual(t, size, 12<<10)
				require.NotNil(t, d.Patch)
				assert.True(t, strings.HasPrefix(d.Patch.Text, "diff --git"), "the start is kept")
				assert.LessOrEqual(t, len(d.Patch.Text), 12<<10)
				assert.Positive(t, d.Patch.Cut)
				assert.Empty(t, d.Edits, "the patch stands for the changes")
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			writeSyntheticRun(t, out, tt.run)
			_, err := runner.Report(out)
			require.NoError(t, err)
			_, _, details := readReport(t, out)
			require.Len(t, details, 1)
			tt.check(t, details[0])
		})
	}
}

// TestReportMissingFolder checks that a session whose folder is gone still has its row
// and says what is missing.
func TestReportMissingFolder(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	sum := writeSyntheticRun(t, out, synthetic{sessions: 2, transcript: 100, calls: 1})
	require.NoError(t, os.RemoveAll(filepath.Join(out, runner.SessionsDir, sum.Sessions[1].Key)))
	_, err := runner.Report(out)
	require.NoError(t, err)
	_, _, details := readReport(t, out)
	require.Len(t, details, 2)
	assert.Empty(t, details[0].Problems)
	assert.Equal(t, sum.Sessions[1].Key, details[1].Row.Key)
	assert.Contains(t, details[1].Problems, "result.json: not found in sessions/"+sum.Sessions[1].Key)
}

func TestReportWithoutSummary(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		summary string // "" writes none
		want    []string
	}{
		"none":         {want: []string{"holds no summary.json"}},
		"not JSON":     {summary: "{\n  \"spec\": \"a.yaml\",\n  oops\n}", want: []string{"summary.json is not agentrun's summary", "line 3, column 3", "invalid character 'o'"}},
		"a wrong type": {summary: "{\"sessions\": [\n  {\"key\": 3}]}", want: []string{"line 2, column 11", "sessions.key", "of type string"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.summary != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, runner.SummaryFile), []byte(tt.summary), 0o644))
			}
			_, err := runner.Report(dir)
			require.ErrorIs(t, err, runner.ErrNoSummary)
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w)
			}
			assert.NoFileExists(t, filepath.Join(dir, runner.ReportFile))
		})
	}
}

// TestReportBanner checks that summary.json's warnings and the sandbox-off note head the
// page, escaped.
func TestReportBanner(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	writeSyntheticRun(t, out, synthetic{sessions: 3, transcript: 100})
	rewriteJSON(t, filepath.Join(out, runner.SummaryFile), func(s *runner.Summary) {
		s.Warnings = []string{"2 sessions <b>ran</b> & more"}
		s.Sessions[1].Sandbox = "off"
	})
	_, err := runner.Report(out)
	require.NoError(t, err)
	page, _, _ := readReport(t, out)
	assert.Contains(t, page, `<p class="warning" role="alert">⚠ 2 sessions &lt;b&gt;ran&lt;/b&gt; &amp; more</p>`)
	assert.Contains(t, page, `<p class="warning" role="alert">⚠ Sandbox off: 1 session ran its tools without kernel confinement`)
	assert.Less(t, strings.Index(page, "⚠ 2 sessions"), strings.Index(page, `class="charts"`), "above the charts")
}

// TestReportSecrets checks that no secret reaches report.html: not in the page, and not
// in the compressed details, where the mask of the written file could not find it. The
// session folder here holds the secret unmasked (a folder written by hand, or before
// the secret was declared), so the report's own masking is what is tested.
func TestReportSecrets(t *testing.T) {
	t.Parallel()
	// A + becomes &#43; in HTML and \u002b nowhere, a / stays: the forms differ.
	const secret = "sk-live-AbC+dEf/gh1=2&3<4"
	out := t.TempDir()
	sum := writeSyntheticRun(t, out, synthetic{sessions: 3, transcript: 300, calls: 4, patch: 200, text: "token " + secret})
	sum.Warnings = []string{"the key " + secret + " expired"}
	files := sink.NewFiles([]string{secret})
	dir := func(key string) string { return filepath.Join(out, runner.SessionsDir, key) }
	require.NoError(t, runner.WriteReports(files, out, sum, dir, nil))

	page, raw, details := readReport(t, out)
	require.Len(t, details, 3)
	for _, form := range []string{secret, html.EscapeString(secret), strings.ReplaceAll(html.EscapeString(secret), "+", "&#43;"),
		"AbC+dEf", "AbC&#43;dEf", `AbC\u002bdEf`} {
		assert.NotContains(t, page, form)
		for i, j := range raw {
			assert.NotContains(t, j, form, "session %d", i)
		}
	}
	// The places where it was are masked, not dropped.
	assert.Contains(t, details[0].Transcript.Text, "token ***")
	assert.Contains(t, details[0].Result.Text, "token ***")
	assert.Contains(t, details[0].Tools[1].Input.Text, "token ***")
	assert.Contains(t, details[0].Patch.Text, "token ***")
	assert.Contains(t, page, "the key *** expired")
}

// TestReportSecretsOfARun runs a session that repeats a secret and checks the run's
// report.html, details included.
func TestReportSecretsOfARun(t *testing.T) {
	t.Parallel()
	const secret = "sk-test-7hJk+Qw/Zx9"
	script, err := scripted.ParseScript("leak.yaml", []byte("steps:\n  - text: \"The key is "+secret+" <script>x</script>.\"\n"))
	require.NoError(t, err)
	p := providerFunc(func(s jobs.Session) (agent.Provider, runner.ProviderInfo, error) {
		return scripted.New(scripted.Options{Default: script}), runner.ProviderInfo{Name: "scripted", Model: "leaky"}, nil
	})
	spec := writeSpec(t, t.TempDir(), "version: 1\njobs:\n  - {id: leak, prompt: Say the key.}\n")
	out := filepath.Join(t.TempDir(), "out")
	_, err = newRunner(t, runner.Options{Out: out, Providers: p, Secrets: []string{secret},
		Environ: []string{"PATH=" + os.Getenv("PATH")}}).Run(context.Background(), spec)
	require.NoError(t, err)
	page, raw, details := readReport(t, out)
	require.Len(t, details, 1)
	assert.NotContains(t, page, "7hJk")
	assert.NotContains(t, raw[0], "7hJk")
	assert.Contains(t, details[0].Transcript.Text, "The key is *** <script>x</script>.")
	assert.Contains(t, details[0].Result.Text, "The key is *** <script>x</script>.")
}

// TestReportMerged checks the report of a merged folder: the merged summary names each
// session's folder in its shard relative to itself, so agentrun report finds the
// details, also after the folders moved together.
func TestReportMerged(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	var shards []string
	for i, dir := range runDemoShards(t, shardBatchSpec, 2, nil) {
		dst := filepath.Join(parent, fmt.Sprintf("shard-%d", i))
		require.NoError(t, os.CopyFS(dst, os.DirFS(dir)))
		shards = append(shards, dst)
	}
	merged := filepath.Join(parent, "merged")
	sum, err := runner.Merge(merged, shards)
	require.NoError(t, err)
	require.Len(t, sum.Sessions, 13)

	check := func(t *testing.T, out string) {
		var onDisk runner.Summary
		readJSON(t, filepath.Join(out, runner.SummaryFile), &onDisk)
		_, _, details := readReport(t, out)
		require.Len(t, details, 13)
		for i, d := range details {
			row := onDisk.Sessions[i]
			assert.Regexp(t, `^\.\./shard-[01]/sessions/`+regexp.QuoteMeta(row.Key)+`$`, row.SessionDir)
			assert.Equal(t, row.SessionDir, d.Dir)
			assert.Empty(t, d.Problems, row.Key)
			require.NotNil(t, d.Transcript, row.Key)
			assert.Contains(t, d.Transcript.Text, "job "+row.JobID, row.Key)
		}
	}
	t.Run("merge", func(t *testing.T) { check(t, merged) })

	moved := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.CopyFS(moved, os.DirFS(parent)))
	require.NoError(t, os.Remove(filepath.Join(moved, "merged", runner.ReportFile)))
	_, err = runner.Report(filepath.Join(moved, "merged"))
	require.NoError(t, err)
	t.Run("report after a move", func(t *testing.T) { check(t, filepath.Join(moved, "merged")) })
}

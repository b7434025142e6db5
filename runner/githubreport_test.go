package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/fuzzguard"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
)

// TestGitHubOutputs writes values that would end or break a heredoc with a fixed or
// predictable delimiter; the random source makes the first delimiter collide.
func TestGitHubOutputs(t *testing.T) {
	t.Parallel()
	first := "ghadelimiter_" + fmt.Sprintf("%x", []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	tests := map[string]string{
		"plain":                      "success",
		"empty":                      "",
		"multi-line":                 "line one\nline two",
		"trailing newline":           "text\n",
		"the delimiter on its line":  "before\n" + first + "\nafter",
		"only the delimiter":         first,
		"the delimiter inside":       "x" + first + "y",
		"a fixed EOF delimiter":      "a\nEOF\nname=injected",
		"looks like another output":  "ok\nstatus<<X\nhacked\nX",
		"carriage return and equals": "a=b\r\nc",
	}
	for name, value := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "output")
			g := &GitHub{Output: path, Random: &countingReader{}}
			require.NoError(t, g.writeOutputs([][2]string{{"value", value}, {"after", "1"}}))
			got := readGHOutputs(t, path)
			assert.Equal(t, map[string]string{"value": value, "after": "1"}, got)
		})
	}

	t.Run("report path with the delimiter", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "x\n"+first+"\ny")
		g := &GitHub{Output: filepath.Join(dir, "output"), Random: &countingReader{}}
		require.NoError(t, g.Report(&Summary{Totals: Totals{Passed: 3}}, out))
		got := readGHOutputs(t, g.Output)
		abs, err := filepath.Abs(filepath.Join(out, SummaryFile))
		require.NoError(t, err)
		assert.Equal(t, abs, got["summary-json"])
		assert.Equal(t, filepath.Join(filepath.Dir(abs), ReportFile), got["report-html"])
		assert.Equal(t, "success", got["status"])
		assert.Equal(t, "3", got["passed"])
	})
}

// bigSummary has n sessions with long keys.
func bigSummary(n int) *Summary {
	s := &Summary{Sessions: []Row{}}
	for i := range n {
		s.Sessions = append(s.Sessions, Row{Key: fmt.Sprintf("%s-%06d", strings.Repeat("k", 150), i), Status: protocol.StatusSuccess})
	}
	s.total()
	return s
}

// TestGitHubStepSummary checks that the appended summary keeps the file within GitHub's
// limit, counting what the step wrote before, and is cut at a line boundary.
func TestGitHubStepSummary(t *testing.T) {
	t.Parallel()
	small, big := bigSummary(3), bigSummary(6000)
	require.Greater(t, len(big.Markdown()), MaxStepSummary)
	tests := map[string]struct {
		before    int
		sum       *Summary
		wantWhole bool
	}{
		"fits":                   {before: 100, sum: small, wantWhole: true},
		"longer than the limit":  {sum: big},
		"file nearly full":       {before: MaxStepSummary - 700, sum: small},
		"file full":              {before: MaxStepSummary, sum: small},
		"big after earlier text": {before: 300_000, sum: big},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "summary")
			earlier := strings.Repeat(strings.Repeat("e", 99)+"\n", tt.before/100)
			require.NoError(t, os.WriteFile(path, []byte(earlier), 0o644))
			g := &GitHub{StepSummary: path}
			require.NoError(t, g.Report(tt.sum, t.TempDir()))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(b), MaxStepSummary)
			require.True(t, strings.HasPrefix(string(b), earlier))
			added := string(b[len(earlier):])
			md := tt.sum.Markdown() + "\n"
			if tt.wantWhole {
				assert.Equal(t, md, added)
				return
			}
			kept, cut := strings.CutSuffix(added, summaryCut)
			if added != "" {
				assert.True(t, cut, "a shortened summary says so")
			}
			assert.True(t, strings.HasPrefix(md, kept), "the kept part is the start of the report")
			assert.True(t, kept == "" || strings.HasSuffix(kept, "\n"), "cut at a line end")
		})
	}
}

// failedResult is a result of status with an error message, of the kind the status
// names.
func failedResult(key string, status protocol.Status, msg string) *protocol.Result {
	return &protocol.Result{Key: key, Status: status, IsError: true,
		Error: &protocol.Error{Kind: protocol.ErrorKind(strings.TrimPrefix(string(status), "error_")), Message: msg}}
}

// closeSession writes a session to g's log: some text, then its result.
func closeSession(t testing.TB, g *GitHub, key, text string, res *protocol.Result) {
	s := g.sessionLog(key, "", 0)
	require.NoError(t, s.Write(protocol.Message{Kind: protocol.KindText, Text: text}))
	if res != nil {
		require.NoError(t, s.Write(protocol.Message{Kind: protocol.KindResult, Final: res}))
	}
	require.NoError(t, s.Close())
}

// TestGitHubAnnotations checks the levels, the escaping and GitHub's limit of ten
// annotations of a level per step: past nine, the sessions are named in one last
// annotation.
func TestGitHubAnnotations(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	g := &GitHub{Log: &log}
	var failed []string
	for i := range 13 {
		key := fmt.Sprintf("job.r%02d", i)
		failed = append(failed, key)
		closeSession(t, g, key, "text", failedResult(key, protocol.StatusChecks, fmt.Sprintf("check %d", i)))
	}
	closeSession(t, g, "odd", "text", failedResult("odd", protocol.StatusProvider, "50% off,\r\n::error::x: y"))
	closeSession(t, g, "stopped", "text", failedResult("stopped", protocol.StatusCancelled, "interrupted"))
	closeSession(t, g, "ok", "text", &protocol.Result{Key: "ok", Status: protocol.StatusSuccess})
	closeSession(t, g, "unfinished", "text", nil)
	require.NoError(t, g.Report(&Summary{}, t.TempDir()))

	got := readGHLog(log.String())
	errs := got.find("error")
	require.Len(t, errs, MaxAnnotations)
	for i := range MaxAnnotations - 1 {
		assert.Equal(t, "agentrun "+failed[i], errs[i].Props["title"])
		assert.Equal(t, fmt.Sprintf("error_checks: check %d", i), errs[i].Data)
	}
	last := errs[MaxAnnotations-1]
	assert.Equal(t, "agentrun: 5 more failed sessions", last.Props["title"])
	assert.Equal(t, strings.Join(append(failed[MaxAnnotations-1:], "odd"), ", ")+
		" (see the step summary and the run's artifacts)", last.Data)
	warnings := got.find("warning")
	require.Len(t, warnings, 1)
	assert.Equal(t, "agentrun stopped", warnings[0].Props["title"])
	assert.Equal(t, "cancelled: interrupted", warnings[0].Data)

	t.Run("escaping", func(t *testing.T) {
		var log bytes.Buffer
		g := &GitHub{Log: &log}
		closeSession(t, g, "odd", "text", failedResult("odd", protocol.StatusProvider, "50% off,\r\n::error::x: y"))
		errs := readGHLog(log.String()).find("error")
		require.Len(t, errs, 1)
		assert.Equal(t, "error_provider: 50% off,\n::error::x: y", errs[0].Data, "without the carriage return")
	})
}

func TestGitHubMask(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give []string
		want []string
	}{
		"one":            {give: []string{"sk-abc"}, want: []string{"sk-abc"}},
		"each line":      {give: []string{"a-line\r\nb-line\n"}, want: []string{"a-line", "b-line"}},
		"escapes":        {give: []string{"50%\rx"}, want: []string{"50%", "x"}},
		"each once":      {give: []string{"k1", "k2", "k1", "k2\nk1"}, want: []string{"k1", "k2"}},
		"blank skipped":  {give: []string{"", "  ", "\n\n"}},
		"spaces trimmed": {give: []string{"  padded  "}, want: []string{"padded"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var log bytes.Buffer
			g := &GitHub{Log: &log}
			g.Mask(tt.give)
			var got []string
			for _, c := range readGHLog(log.String()).Commands {
				require.Equal(t, "add-mask", c.Name)
				got = append(got, c.Data)
			}
			sort.Strings(got)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNeutralizeCommands(t *testing.T) {
	t.Parallel()
	z := zeroWidthSpace
	tests := map[string]struct{ give, want string }{
		"plain":              {give: "hello\nworld\n", want: "hello\nworld\n"},
		"command":            {give: "::error::x\n", want: z + "::error::x\n"},
		"legacy command":     {give: "a\n##[group]x", want: "a\n" + z + "##[group]x"},
		"indented":           {give: "\t  ::warning::w", want: z + "\t  ::warning::w"},
		"after a CR":         {give: "ok\r::add-mask::s\r\n", want: "ok\r" + z + "::add-mask::s\r\n"},
		"inside a line":      {give: "see ::error::x", want: "see ::error::x"},
		"single colon":       {give: ":not\n#[no", want: ":not\n#[no"},
		"every line":         {give: "::a::\n::b::", want: z + "::a::\n" + z + "::b::"},
		"non-breaking space": {give: "\u00a0::x::", want: z + "\u00a0::x::"},
		"empty":              {give: "", want: ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.want, neutralizeCommands(tt.give))
		})
	}
}

// FuzzGitHubSessionLog writes a session whose model text and error message are
// arbitrary and reads the log back as the runner would: the only commands are the
// session's own group, stop and resume, and its one annotation with the message intact.
func FuzzGitHubSessionLog(f *testing.F) {
	f.Add("::set-output name=a::b\n::add-mask::x", "failed")
	f.Add("x\r::error::y\r\n##[endgroup]", "50%,\n::warning::w")
	f.Add("::stop-commands::abc\n::abc::\n::endgroup::", "")
	f.Fuzz(func(t *testing.T, text, msg string) {
		fuzzguard.Run(len(text)+len(msg), func() {
			var log bytes.Buffer
			g := &GitHub{Log: &log}
			res := failedResult("fuzz", protocol.StatusChecks, msg)
			closeSession(t, g, "fuzz", text, res)
			got := readGHLog(log.String())
			require.Equal(t, []string{"group", "stop-commands", "resume", "endgroup", "error"}, got.names(), "log:\n%s", log.String())
			// The explanation arrives whole: lines do not matter inside data.
			assert.Equal(t, clip(explain(res).Text(), maxAnnotation), got.Commands[4].Data)
			for _, line := range got.Stopped {
				_, ok := parseGHCommand(line)
				assert.False(t, ok, "line %q reads as a command", line)
			}
		})
	})
}

// errFull is what a full disk returns.
var errFull = errors.New("no space left on device")

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errFull }

// TestGitHubReportErrors checks that a step-output or step-summary file that cannot be
// written fails Report with an error naming which.
func TestGitHubReportErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "folder", "file")
	tests := map[string]struct {
		g    *GitHub
		want string
	}{
		"outputs": {g: &GitHub{Output: missing}, want: "step outputs"},
		"summary": {g: &GitHub{StepSummary: missing}, want: "step summary"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tt.g.Log = failingWriter{}
			err := tt.g.Report(&Summary{}, dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

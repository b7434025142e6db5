package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/scripted"
)

// This file reads what the runner writes for GitHub Actions the way the Actions runner
// does (ActionCommandManager for the log, FileCommandManager for $GITHUB_OUTPUT), so
// the tests check the formats, not the bytes.

// ghCommand is one workflow command the Actions runner would process.
type ghCommand struct {
	Name  string
	Props map[string]string
	Data  string
}

// ghLog is a job log after command processing.
type ghLog struct {
	// Commands are the processed commands in order; the end of a stop-commands
	// region shows as the command "resume".
	Commands []ghCommand
	// Stopped are the lines read while command processing was stopped.
	Stopped []string
}

// names lists the names of the processed commands.
func (l ghLog) names() []string {
	var out []string
	for _, c := range l.Commands {
		out = append(out, c.Name)
	}
	return out
}

// find returns the processed commands called name.
func (l ghLog) find(name string) []ghCommand {
	var out []ghCommand
	for _, c := range l.Commands {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// ghLines splits a log into lines the way the runner reads process output: at "\n",
// "\r" and "\r\n".
func ghLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// readGHLog processes log like the runner: commands are parsed from each line; after
// stop-commands only the line "::TOKEN::" (any case) is a command, which resumes.
func readGHLog(log string) ghLog {
	var out ghLog
	stop := ""
	for _, line := range ghLines(log) {
		cmd, ok := parseGHCommand(line)
		if stop != "" {
			if ok && strings.EqualFold(cmd.Name, stop) {
				stop = ""
				out.Commands = append(out.Commands, ghCommand{Name: "resume"})
				continue
			}
			out.Stopped = append(out.Stopped, line)
			continue
		}
		if !ok {
			continue
		}
		if cmd.Name == "stop-commands" {
			stop = cmd.Data
		}
		out.Commands = append(out.Commands, cmd)
	}
	return out
}

// parseGHCommand parses "::name k=v,k=v::data" and the older "##[name k=v;k=v]data",
// after leading white space, with their escapes.
func parseGHCommand(line string) (ghCommand, bool) {
	line = strings.TrimLeftFunc(line, unicode.IsSpace)
	var info, data, sep string
	var unescape func(string) string
	switch {
	case strings.HasPrefix(line, "::"):
		end := strings.Index(line[2:], "::")
		if end < 0 {
			return ghCommand{}, false
		}
		info, data, sep = line[2:2+end], line[2+end+2:], ","
		unescape = strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%").Replace
	case strings.HasPrefix(line, "##["):
		end := strings.Index(line, "]")
		if end < 0 {
			return ghCommand{}, false
		}
		info, data, sep = line[3:end], line[end+1:], ";"
		unescape = strings.NewReplacer("%3B", ";", "%0D", "\r", "%0A", "\n", "%5D", "]", "%25", "%").Replace
	default:
		return ghCommand{}, false
	}
	name, props, _ := strings.Cut(info, " ")
	if name == "" {
		return ghCommand{}, false
	}
	cmd := ghCommand{Name: strings.ToLower(name), Props: map[string]string{}}
	for _, p := range strings.Split(props, sep) {
		if k, v, ok := strings.Cut(p, "="); ok && k != "" {
			cmd.Props[k] = unescape(v)
		}
	}
	// Message data has only %25, %0D and %0A escapes.
	cmd.Data = strings.NewReplacer("%0D", "\r", "%0A", "\n", "%25", "%").Replace(data)
	return cmd, true
}

// readGHOutputs parses an environment file as FileCommandManager does: "name=value" or
// "name<<DELIM", value lines, then a line equal to DELIM.
func readGHOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, len(b) == 0 || bytes.HasSuffix(b, []byte("\n")), "the file ends with a newline")
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	out := map[string]string{}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" {
			continue
		}
		eq, heredoc := strings.Index(line, "="), strings.Index(line, "<<")
		if eq >= 0 && (heredoc < 0 || eq < heredoc) {
			out[line[:eq]] = line[eq+1:]
			continue
		}
		require.GreaterOrEqual(t, heredoc, 1, "line %q is neither name=value nor name<<DELIM", line)
		name, delim := line[:heredoc], line[heredoc+2:]
		var value []string
		closed := false
		for i++; i < len(lines); i++ {
			if lines[i] == delim {
				closed = true
				break
			}
			value = append(value, lines[i])
		}
		require.True(t, closed, "matching delimiter not found for %s", name)
		out[name] = strings.Join(value, "\n")
	}
	return out
}

// countingReader yields 0, 1, 2, … as random bytes, so tokens are predictable.
type countingReader struct{ n byte }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.n
		r.n++
	}
	return len(p), nil
}

// ghDemoProviders gives every session the scripted model's demo policy, which echoes
// the task in its thinking and its answer.
type ghDemoProviders struct{ model *scripted.Model }

func (p ghDemoProviders) Provider(jobs.Session, func()) (agent.Provider, ProviderInfo, error) {
	return p.model, ProviderInfo{Name: "scripted", Model: "scripted"}, nil
}

// injectionSpec's "inject" job asks the demo model to repeat workflow commands, and
// its failing check's name is full of characters that need escaping.
const injectionSpec = `version: 1
concurrency: 1
defaults:
  provider: scripted
  tools: [Read]
  max_turns: 4
  timeout: 1m
  secrets: [DEPLOY_TOKEN, CERT]
jobs:
  - id: inject
    prompt: "Token ${DEPLOY_TOKEN}\n::set-output name=status::hacked\n::add-mask::visible\n##[add-mask]legacy\n::endgroup::\n::stop-commands::pause\nx\r::error::after cr\n::pause::\n  ::warning title=w::spaced"
  - id: broken
    prompt: Say anything.
    checks:
      - {name: "100%, a:b\n::warning::injected", run: "exit 1"}
  - id: fine
    prompt: Say hello.
`

// TestGitHubRun runs a spec with the integration on and reads the log, the step
// outputs and the step summary as GitHub would.
func TestGitHubRun(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"DEPLOY_TOKEN": "tok-3f9a7c21e0", "CERT": "-----BEGIN-----\nline%two\n"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	require.NoError(t, os.WriteFile(filepath.Join(dir, "jobs.yaml"), []byte(injectionSpec), 0o644))
	spec, err := jobs.Load(filepath.Join(dir, "jobs.yaml"), lookup)
	require.NoError(t, err)

	var log bytes.Buffer
	gh := &GitHub{Output: filepath.Join(dir, "output"), StepSummary: filepath.Join(dir, "summary"), Log: &log}
	require.NoError(t, os.WriteFile(gh.StepSummary, []byte("# Earlier step\n"), 0o644))
	out := filepath.Join(dir, "out")
	home := t.TempDir()
	sum, err := New(Options{Out: out, Providers: ghDemoProviders{scripted.New(scripted.Options{})}, GitHub: gh,
		LookupEnv: lookup, Home: home, InstructionHome: home,
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Equal(t, 2, sum.Totals.Passed)
	require.Equal(t, 1, sum.Totals.Failed)

	raw := log.String()
	// The injected text reached the log, so the guards below have something to stop.
	require.Contains(t, raw, "::set-output name=status::hacked")
	got := readGHLog(raw)
	session := []string{"group", "stop-commands", "resume", "endgroup"}
	want := append([]string{"add-mask", "add-mask", "add-mask"}, session...) // broken
	want = append(append(append(want, "error"), session...), session...)     // fine, inject
	assert.Equal(t, want, got.names())

	var masks []string
	for _, c := range got.find("add-mask") {
		masks = append(masks, c.Data)
	}
	assert.ElementsMatch(t, []string{"tok-3f9a7c21e0", "-----BEGIN-----", "line%two"}, masks)
	assert.Equal(t, 1, strings.Count(raw, "tok-3f9a7c21e0"), "the secret appears only in its add-mask command")

	groups := got.find("group")
	require.Len(t, groups, 3)
	for i, key := range []string{"broken", "fine", "inject"} {
		assert.Contains(t, groups[i].Data, key)
	}
	errs := got.find("error")
	require.Len(t, errs, 1)
	assert.Equal(t, "agentrun broken", errs[0].Props["title"])
	assert.Equal(t, "error_checks: failed checks: 100%, a:b\n::warning::injected", errs[0].Data)

	// Second guard: no line of model output parses as a command even without the stop.
	assert.NotEmpty(t, got.Stopped)
	for _, line := range got.Stopped {
		_, ok := parseGHCommand(line)
		assert.False(t, ok, "line %q of model output reads as a workflow command", line)
	}

	outputs := readGHOutputs(t, gh.Output)
	absSummary, err := filepath.Abs(filepath.Join(out, SummaryFile))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"status": "failure", "passed": "2", "failed": "1",
		"total-cost-usd": "0.000000", "summary-json": absSummary}, outputs)
	assert.FileExists(t, outputs["summary-json"])

	md, err := os.ReadFile(filepath.Join(out, SummaryMDFile))
	require.NoError(t, err)
	step, err := os.ReadFile(gh.StepSummary)
	require.NoError(t, err)
	assert.Equal(t, "# Earlier step\n"+string(md)+"\n", string(step))
}

func TestGitHubFromEnv(t *testing.T) {
	tests := map[string]struct {
		env  map[string]string
		want *GitHub
	}{
		"outside Actions": {env: map[string]string{"GITHUB_OUTPUT": "/o"}},
		"not true":        {env: map[string]string{"GITHUB_ACTIONS": "false", "GITHUB_OUTPUT": "/o"}},
		"in Actions": {
			env:  map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": "/o", "GITHUB_STEP_SUMMARY": "/s"},
			want: &GitHub{Output: "/o", StepSummary: "/s"},
		},
		"in Actions without files": {env: map[string]string{"GITHUB_ACTIONS": "true"}, want: &GitHub{}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var log bytes.Buffer
			got := GitHubFromEnv(func(k string) string { return tt.env[k] }, &log)
			if tt.want == nil {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, tt.want.Output, got.Output)
			assert.Equal(t, tt.want.StepSummary, got.StepSummary)
			assert.Same(t, &log, got.Log)
		})
	}
}

// TestGitHubOutputs writes values that would end or break a heredoc with a fixed or
// predictable delimiter; the random source makes the first delimiter collide.
func TestGitHubOutputs(t *testing.T) {
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

// failedResult is a result of status with an error message.
func failedResult(key string, status protocol.Status, msg string) *protocol.Result {
	return &protocol.Result{Key: key, Status: status, IsError: true, Error: &protocol.Error{Kind: "test", Message: msg}}
}

// closeSession writes a session to g's log: some text, then its result.
func closeSession(t testing.TB, g *GitHub, key, text string, res *protocol.Result) {
	s := g.sessionLog(key)
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
		assert.Equal(t, "error_provider: 50% off,\r\n::error::x: y", errs[0].Data)
	})
}

func TestGitHubMask(t *testing.T) {
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
		var log bytes.Buffer
		g := &GitHub{Log: &log}
		closeSession(t, g, "fuzz", text, failedResult("fuzz", protocol.StatusChecks, msg))
		got := readGHLog(log.String())
		require.Equal(t, []string{"group", "stop-commands", "resume", "endgroup", "error"}, got.names(), "log:\n%s", log.String())
		want := clip("error_checks: "+msg, 2000)
		// A lone "\r" is escaped like the rest; lines do not matter inside data.
		assert.Equal(t, want, got.Commands[4].Data)
		for _, line := range got.Stopped {
			_, ok := parseGHCommand(line)
			assert.False(t, ok, "line %q reads as a command", line)
		}
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

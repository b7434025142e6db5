package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
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

func (p ghDemoProviders) Provider(jobs.Session, Liveness) (agent.Provider, ProviderInfo, error) {
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
	t.Parallel()
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
	assert.Equal(t, "error_checks: check 100%, a:b ::warning::injected failed: exit code 1\n(no output)", errs[0].Data)

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
		"total-cost-usd": "0.000000", "summary-json": absSummary, "conclusion": "failure",
		"report-html": filepath.Join(filepath.Dir(absSummary), ReportFile)}, outputs)
	assert.FileExists(t, outputs["summary-json"])
	assert.FileExists(t, outputs["report-html"])

	md, err := os.ReadFile(filepath.Join(out, SummaryMDFile))
	require.NoError(t, err)
	step, err := os.ReadFile(gh.StepSummary)
	require.NoError(t, err)
	assert.Equal(t, "# Earlier step\n"+string(md)+"\n", string(step))
}

func TestGitHubFromEnv(t *testing.T) {
	t.Parallel()
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

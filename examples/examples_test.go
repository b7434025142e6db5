// Package examples_test runs every example job spec with the built-in scripted model, as
// a new user without an API key would, and checks what each example promises.
package examples_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/worker"
	"github.com/agentrun/agentrun/worker/workertest"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/testexit"
	"github.com/agentrun/agentrun/transport/scripted"
)

func TestMain(m *testing.M) {
	worker.ExitIfWorker() // a worker of this test binary, should a test start one
	goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit))
}

// scriptedProviders gives every session the scripted model playing the session's
// script, named the way cmd/agentrun names it when no API key is configured.
type scriptedProviders struct{}

func (scriptedProviders) Provider(s jobs.Session, _ runner.Liveness) (agent.Provider, runner.ProviderInfo, error) {
	script, err := scripted.LoadScript(s.Settings.Script)
	if err != nil {
		return nil, runner.ProviderInfo{}, err
	}
	model := s.Settings.Model
	if model == "" {
		model = "scripted"
	}
	return scripted.New(scripted.Options{Default: script}), runner.ProviderInfo{Name: "scripted", Model: model}, nil
}

// example is what one spec must produce.
type example struct {
	file     string
	wantExit int
	// wantStatus is every session's status by key.
	wantStatus map[string]protocol.Status
	// check looks at the results (by key) and the output folder.
	check func(t *testing.T, results map[string]protocol.Result, out string)
}

var examples = []example{
	{
		file:     "quickstart.yaml",
		wantExit: 0,
		wantStatus: map[string]protocol.Status{
			"add-farewell": protocol.StatusSuccess, "fix-initials": protocol.StatusSuccess,
			"document-initials": protocol.StatusSuccess,
		},
		check: func(t *testing.T, results map[string]protocol.Result, out string) {
			ws := filepath.Join(out, runner.WorkspacesDir)
			assert.FileExists(t, filepath.Join(ws, "add-farewell", "farewell.go"))
			assert.FileExists(t, filepath.Join(ws, "add-farewell", "farewell_test.go"))
			assert.Contains(t, readFile(t, filepath.Join(ws, "fix-initials", "greet.go")), "strings.Fields(fullName)")
			readme := readFile(t, filepath.Join(ws, "document-initials", "README.md"))
			assert.NotContains(t, readme, "TODO")
			assert.Contains(t, readme, "`Initials(fullName)`")
			// The session saw the bug before fixing it: its first test run failed.
			transcript := readFile(t, filepath.Join(out, runner.SessionsDir, "fix-initials", runner.TranscriptFile))
			assert.Contains(t, transcript, "--- FAIL: TestInitials")
			assert.Contains(t, transcript, "ok  \texample.com/greet")
			tools := usedTools(t, out)
			for _, name := range []string{"Write", "Read", "Edit", "Bash", "Glob", "Grep", "TodoWrite"} {
				assert.True(t, tools[name], "the quick start shows the %s tool", name)
			}
		},
	},
	{
		file:     "batch-eval.yaml",
		wantExit: 1,
		wantStatus: map[string]protocol.Status{
			"add-shout+model=claude-sonnet-4-6.r1": protocol.StatusSuccess,
			"add-shout+model=claude-sonnet-4-6.r2": protocol.StatusSuccess,
			"add-shout+model=gpt-5.4.r1":           protocol.StatusSuccess,
			"add-shout+model=gpt-5.4.r2":           protocol.StatusSuccess,
			"review-initials":                      protocol.StatusSuccess,
			"expected-failure":                     protocol.StatusChecks,
		},
		check: func(t *testing.T, results map[string]protocol.Result, out string) {
			failed := results["expected-failure"]
			require.Len(t, failed.Checks, 1)
			assert.Equal(t, "hidden-test", failed.Checks[0].Name)
			assert.False(t, failed.Checks[0].Passed)
			assert.Contains(t, failed.Checks[0].Output, `Reverse("héllo")`)

			var review struct {
				Verdict  string
				Findings []struct {
					File string
					Line int
				}
			}
			require.NoError(t, json.Unmarshal(results["review-initials"].StructuredOutput, &review))
			assert.Equal(t, "bug", review.Verdict)
			require.Len(t, review.Findings, 1)
			assert.Equal(t, "greet.go", review.Findings[0].File)
			line := strings.Split(readFile(t, filepath.Join("quickstart", "project", "greet.go")), "\n")[review.Findings[0].Line-1]
			assert.Contains(t, line, "strings.Split", "the review points at the line of the bug")

			junit := readFile(t, filepath.Join(out, runner.JUnitFile))
			assert.Contains(t, junit, `tests="6" failures="1"`)
			assert.Contains(t, junit, `<testcase name="expected-failure"`)
			md := readFile(t, filepath.Join(out, runner.SummaryMDFile))
			assert.Contains(t, md, "`expected-failure`")
			assert.Contains(t, md, "error_checks")
		},
	},
	{
		file:       "mcp.yaml",
		wantExit:   0,
		wantStatus: map[string]protocol.Status{"fix-issue": protocol.StatusSuccess},
		check: func(t *testing.T, results map[string]protocol.Result, out string) {
			res := results["fix-issue"]
			assert.Equal(t, []protocol.MCPServer{{Name: "tracker", Transport: "stdio", Status: protocol.MCPConnected,
				ToolCount: 3, Required: true}}, res.MCPServers)
			ws := filepath.Join(out, runner.WorkspacesDir, "fix-issue")
			issues := readFile(t, filepath.Join(ws, "issues.json"))
			assert.Contains(t, issues, `"state": "closed"`, "the tracker recorded the comment in the session's copy")
			assert.Contains(t, issues, "Fixed: Mean returns 0")
			assert.Contains(t, readFile(t, filepath.Join(ws, "stats", "stats.go")), "len(xs) == 0")
			tools := usedTools(t, out)
			for _, name := range []string{"mcp__tracker__list_issues", "mcp__tracker__get_issue", "mcp__tracker__comment", "Edit", "Bash"} {
				assert.True(t, tools[name], "the session calls %s", name)
			}
			transcript := readFile(t, filepath.Join(out, runner.SessionsDir, "fix-issue", runner.TranscriptFile))
			assert.Contains(t, transcript, "◇ mcp tracker: connected (3 tools)")
			assert.Contains(t, transcript, "stats.Mean panics on an empty sample", "the issue came from the tracker")
		},
	},
	{
		file:     "maintenance.yaml",
		wantExit: 0,
		wantStatus: map[string]protocol.Status{
			"nightly-health": protocol.StatusSuccess, "replace-ioutil": protocol.StatusSuccess,
		},
		check: func(t *testing.T, results map[string]protocol.Result, out string) {
			// The read-only policy refused the write into the shared repository.
			transcript := readFile(t, filepath.Join(out, runner.SessionsDir, "nightly-health", runner.TranscriptFile))
			assert.Contains(t, transcript, "command blocked by bash safety policy")
			assert.NoFileExists(t, filepath.Join("maintenance", "repo", "LAST_RUN"))
			assert.Contains(t, results["nightly-health"].Result, "## Nightly health report")
			copied := filepath.Join(out, runner.WorkspacesDir, "replace-ioutil")
			assert.NotContains(t, readFile(t, filepath.Join(copied, "inventory.go")), "io/ioutil")
			assert.Contains(t, readFile(t, filepath.Join(copied, "CHANGELOG.md")), "os.ReadFile")
		},
	},
}

// TestExamples runs every example with the scripted model and checks its exit code,
// every session's status and artifacts, and that the bundled projects stay unchanged.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every example's sessions in workers (not with -short)")
	}
	files, err := filepath.Glob("*.yaml")
	require.NoError(t, err)
	var covered []string
	for _, ex := range examples {
		covered = append(covered, ex.file)
	}
	assert.ElementsMatch(t, files, covered, "every example spec has a case here")

	before := snapshot(t, ".")
	// The specs run at once, each with its own output folder and HOME; the folder is
	// compared once the last has ended.
	t.Cleanup(func() {
		assert.Equal(t, before, snapshot(t, "."), "running the examples leaves the examples folder unchanged")
	})
	for _, ex := range examples {
		t.Run(ex.file, func(t *testing.T) {
			t.Parallel()
			spec, err := jobs.Load(ex.file, func(string) (string, bool) { return "", false })
			require.NoError(t, err)
			sessions, err := spec.Sessions()
			require.NoError(t, err)
			for _, s := range sessions {
				require.Empty(t, s.Settings.Provider, "%s names no provider, so an API key switches it to a real model", s.Key)
				require.NotEmpty(t, s.Settings.Script, "%s has a script for the scripted model", s.Key)
			}

			out := t.TempDir()
			home := t.TempDir()
			r := runner.New(runner.Options{
				Out: out, Providers: scriptedProviders{}, Environ: toolEnviron(),
				Home: home, InstructionHome: filepath.Join(home, ".agentrun"),
				LookupEnv: func(string) (string, bool) { return "", false }, Version: "test",
				Sandbox: runner.SandboxOptions{Binary: workertest.Bin(t)},
			})
			sum, err := r.Run(context.Background(), spec)
			require.NoError(t, err)
			assert.Equal(t, ex.wantExit, sum.ExitCode(false), sum.Text())

			for _, f := range []string{runner.RunFile, runner.SummaryFile, runner.SummaryMDFile, runner.JUnitFile, runner.RunLogFile} {
				assert.FileExists(t, filepath.Join(out, f))
			}
			results := map[string]protocol.Result{}
			got := map[string]protocol.Status{}
			for _, s := range sessions {
				dir := filepath.Join(out, runner.SessionsDir, s.Key)
				for _, f := range []string{runner.StreamFile, runner.EventsFile, runner.TranscriptFile, runner.MessagesFile, runner.ResultFile} {
					assert.FileExists(t, filepath.Join(dir, f))
				}
				var res protocol.Result
				require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, runner.ResultFile))), &res))
				results[s.Key], got[s.Key] = res, res.Status
				if ex.wantStatus[s.Key] == protocol.StatusSuccess {
					for _, c := range res.Checks {
						assert.True(t, c.Passed, "%s: check %s: %s", s.Key, c.Name, c.Output)
					}
				}
				assertOneResult(t, filepath.Join(dir, runner.StreamFile))
			}
			assert.Equal(t, ex.wantStatus, got)
			ex.check(t, results, out)
		})
	}
}

// toolEnviron is this process's environment without API keys, as cmd/agentrun hands
// it to tools and checks.
func toolEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "ANTHROPIC_API_KEY" && name != "OPENAI_API_KEY" && name != "ANTHROPIC_AUTH_TOKEN" {
			env = append(env, kv)
		}
	}
	return env
}

// assertOneResult checks that a stream opens with session_start and ends with its only
// result.
func assertOneResult(t *testing.T, path string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(readFile(t, path), "\n"), "\n")
	types := make([]string, len(lines))
	for i, line := range lines {
		var ev struct{ Type string }
		require.NoError(t, json.Unmarshal([]byte(line), &ev), "%s line %d", path, i+1)
		types[i] = ev.Type
	}
	assert.Equal(t, "session_start", types[0], path)
	assert.Equal(t, "result", types[len(types)-1], path)
	n := 0
	for _, ty := range types {
		if ty == "result" {
			n++
		}
	}
	assert.Equal(t, 1, n, path)
}

// usedTools returns the names of the tools called in any session of out.
func usedTools(t *testing.T, out string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(out, runner.SessionsDir, "*", runner.StreamFile))
	require.NoError(t, err)
	used := map[string]bool{}
	for _, f := range files {
		for _, line := range strings.Split(readFile(t, f), "\n") {
			var ev struct{ Type, Name string }
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "tool_call" {
				used[ev.Name] = true
			}
		}
	}
	return used
}

// snapshot maps every file under root to its content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	require.NoError(t, err)
	return files
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestMCPProjectNeedsOnlyAgentrunsModules holds the MCP example's project to the module
// versions agentrun itself requires: its tracker is built with GOPROXY off, from the
// module cache that building agentrun filled, so a version agentrun does not use would
// be missing on a fresh machine.
func TestMCPProjectNeedsOnlyAgentrunsModules(t *testing.T) {
	t.Parallel()
	ours := requires(t, filepath.Join("..", "go.mod"))
	theirs := requires(t, filepath.Join("mcp", "project", "go.mod"))
	require.NotEmpty(t, theirs)
	for mod, v := range theirs {
		assert.Equal(t, ours[mod], v, "examples/mcp/project/go.mod requires %s %s; agentrun's go.mod has %q", mod, v, ours[mod])
	}
}

// requires reads the module versions a go.mod file requires, in its single-line and
// block forms.
func requires(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]string{}
	block := false
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "require" && f[1] == "(":
			block = true
		case block && len(f) == 1 && f[0] == ")":
			block = false
		case block && len(f) == 2:
			out[f[0]] = f[1]
		case len(f) == 3 && f[0] == "require":
			out[f[1]] = f[2]
		}
	}
	return out
}

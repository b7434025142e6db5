package main

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/transport/scripted"
)

// readmeTestEnv marks the test command that TestReadme runs, so that the nested run
// does not start TestReadme again.
const readmeTestEnv = "AGENTRUN_README_TEST"

// readmeFullEnv opts in to running the README's test command inside the clone.
const readmeFullEnv = "AGENTRUN_README_FULL"

// quickStartLine is how the README's quick-start command is recognised.
var quickStartLine = regexp.MustCompile(`\bagentrun run examples/quickstart\.yaml\b`)

// readmeCommands returns the quick-start command of the README's first code block that
// has one, and the command on the line after it (the test command).
func readmeCommands(readme string) (quick, test string, err error) {
	var block []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "```") {
			if in {
				if quick, test = commandsOf(block); quick != "" {
					break
				}
				block = nil
			}
			in = !in
			continue
		}
		if in {
			block = append(block, line)
		}
	}
	switch {
	case quick == "":
		return "", "", errors.New("no code block with `go run ./cmd/agentrun run examples/quickstart.yaml`")
	case test == "":
		return "", "", errors.New("the quick-start code block has no command after the quick start")
	}
	return quick, test, nil
}

// commandsOf finds the quick-start command in a code block and the command after it;
// blank lines and comments are skipped and a "$ " prompt is removed.
func commandsOf(block []string) (quick, test string) {
	var cmds []string
	for _, line := range block {
		line = strings.TrimPrefix(line, "$ ")
		if line != "" && !strings.HasPrefix(line, "#") {
			cmds = append(cmds, line)
		}
	}
	for i, c := range cmds {
		if quickStartLine.MatchString(c) {
			if i+1 < len(cmds) {
				return c, cmds[i+1]
			}
			return c, ""
		}
	}
	return "", ""
}

func TestReadmeCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		readme          string
		wantQuick, want string
		wantErr         bool
	}{
		{
			name:      "two commands",
			readme:    "# x\n\n```sh\n$ go run ./cmd/agentrun run examples/quickstart.yaml\n$ go test ./...\n```\n",
			wantQuick: "go run ./cmd/agentrun run examples/quickstart.yaml", want: "go test ./...",
		},
		{
			name:      "comments and an earlier block",
			readme:    "```\ngit clone x\n```\n\n```bash\n# no key needed\ngo run ./cmd/agentrun run examples/quickstart.yaml\n\n# the tests\ngo test -race ./...\n```\n",
			wantQuick: "go run ./cmd/agentrun run examples/quickstart.yaml", want: "go test -race ./...",
		},
		{name: "no quick start", readme: "```\ngo test ./...\n```\n", wantErr: true},
		{name: "no test command", readme: "```\ngo run ./cmd/agentrun run examples/quickstart.yaml\n```\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			quick, test, err := readmeCommands(tt.readme)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantQuick, quick)
			assert.Equal(t, tt.want, test)
		})
	}
}

// TestReadme follows the README as a new user would: clone the repository, run the
// quick start without an API key, then the test command. It needs a clean work tree
// (a clone has only what is committed); the test command runs only without -short.
func TestReadme(t *testing.T) {
	if os.Getenv(readmeTestEnv) != "" {
		t.Skip("this is the README's own test command, run by TestReadme")
	}
	if testing.Short() {
		t.Skip("-short: the quick start from a fresh clone builds agentrun there; TestFakeServerQuickStart runs the same spec")
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("README.md does not exist yet")
	}
	require.NoError(t, err)
	quick, testCmd, err := readmeCommands(string(b))
	require.NoError(t, err)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	status, err := exec.Command("git", "-C", filepath.Join("..", ".."), "status", "--porcelain").Output()
	require.NoError(t, err)
	if len(status) > 0 {
		t.Skipf("the work tree has uncommitted changes, which a fresh clone would not have; commit them to run this test:\n%s", status)
	}

	clone := filepath.Join(t.TempDir(), "agentrun")
	out, err := exec.Command("git", "clone", "--quiet", filepath.Join("..", ".."), clone).CombinedOutput()
	require.NoError(t, err, "git clone: %s", out)

	// Without -trimpath a build keys each package on its folder, so the clone would
	// compile every package again; with it, the clone reuses what was compiled for
	// agentrunBin and only links.
	agentrunBin(t)
	start := time.Now()
	o := shell(t, clone, quick, baseEnv(t, "GOFLAGS=-trimpath"), 5*time.Minute)
	t.Logf("quick start %q took %s", quick, time.Since(start).Round(100*time.Millisecond))
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	outDir := filepath.Join(clone, "out")
	if m := regexp.MustCompile(`--out[ =](\S+)`).FindStringSubmatch(quick); m != nil {
		outDir = filepath.Join(clone, m[1])
	}
	assert.FileExists(t, filepath.Join(outDir, "summary.md"))
	var sum struct {
		Sessions []struct{ Key, Status string }
	}
	readJSON(t, filepath.Join(outDir, "summary.json"), &sum)
	require.NotEmpty(t, sum.Sessions)
	for _, s := range sum.Sessions {
		assert.Equal(t, "success", s.Status, s.Key)
		for _, f := range sessionFiles {
			assert.FileExists(t, filepath.Join(outDir, "sessions", s.Key, f))
		}
	}

	t.Run("test command", func(t *testing.T) {
		// CI runs exactly this command on a clean clone (.ci/run), which is the same proof;
		// doing it again inside the suite would double CI's time, so it is opt-in here.
		if os.Getenv(readmeFullEnv) == "" {
			t.Skipf("set %s=1 to also run the README's test command %q in the clone (CI runs it on a clean clone already)", readmeFullEnv, testCmd)
		}
		if testing.Short() {
			t.Skipf("-short: not running the README's test command %q", testCmd)
		}
		timeout := 20 * time.Minute
		if d, ok := t.Deadline(); ok {
			timeout = time.Until(d) - 30*time.Second
		}
		start := time.Now()
		o := shell(t, clone, testCmd, baseEnv(t, readmeTestEnv+"=1"), timeout)
		t.Logf("test command %q took %s", testCmd, time.Since(start).Round(time.Second))
		assert.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	})
}

// shell runs a command line with sh in dir and returns its output and exit code.
func shell(t *testing.T, dir, line string, env []string, timeout time.Duration) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o := outcome{stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s: %v", line, err)
		o.code = ee.ExitCode()
	}
	return o
}

// readmeSection returns the README's section under the heading "## title", up to the
// next section.
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "\n## "+title+"\n")
	require.True(t, ok, "README.md has no section %q", title)
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

// codeBlocks returns the fenced code blocks of md whose info string is lang, each
// without its fences.
func codeBlocks(md, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestReadmeScripts writes the files of the README's section on the scripted model
// (the YAML blocks whose first line is "# PATH"), checks the error message it quotes,
// and runs its spec as its commands do: in process and against fake-server --spec,
// where every session passes with the same answers, retries and tool-call ids.
func TestReadmeScripts(t *testing.T) {
	t.Parallel()
	section := readmeSection(t, "The scripted model")
	dir := t.TempDir()
	files := map[string]string{}
	for _, block := range codeBlocks(section, "yaml") {
		first, _, _ := strings.Cut(block, "\n")
		path, ok := strings.CutPrefix(first, "# ")
		require.True(t, ok, "a YAML block without its file name on the first line:\n%s", block)
		files[path] = block
		writeFile(t, dir, path, block)
	}
	require.ElementsMatch(t, []string{"jobs.yaml", "scripts/explore.yaml", "scripts/delegate.yaml"}, slices.Collect(maps.Keys(files)))

	// The error the section quotes is the one a misspelt key gets.
	m := regexp.MustCompile("`(scripts/explore\\.yaml:[^`]+)`").FindStringSubmatch(section)
	require.NotNil(t, m, "the section quotes an error of scripts/explore.yaml")
	_, err := scripted.ParseScript("scripts/explore.yaml", []byte(strings.Replace(files["scripts/explore.yaml"], "name: Glob", "nmae: Glob", 1)))
	require.Error(t, err)
	assert.Equal(t, strings.Join(strings.Fields(m[1]), " "), err.Error())

	sh := codeBlocks(section, "sh")
	require.Len(t, sh, 1)
	assert.Contains(t, sh[0], "agentrun run jobs.yaml ")
	assert.Contains(t, sh[0], "agentrun fake-server --spec jobs.yaml &")
	assert.Contains(t, sh[0], "ANTHROPIC_BASE_URL=http://127.0.0.1:8089/v1 agentrun run jobs.yaml --out out-http")

	spec := filepath.Join(dir, "jobs.yaml")
	url := startFakeServerArgs(t, "--spec", spec)
	answers := map[string]map[string]string{}
	for _, run := range []struct{ name, out, url string }{{"in-process", "out", ""}, {"fake-server", "out-http", url}} {
		env := baseEnv(t)
		if run.url != "" {
			env = baseEnv(t, "ANTHROPIC_BASE_URL="+run.url)
		}
		o := agentrun(t, invocation{args: []string{"run", "jobs.yaml", "--out", run.out, "--progress", "off"}, env: env, dir: dir})
		require.Equal(t, 0, o.code, "%s: %s", run.name, o.stderr)
		out := filepath.Join(dir, run.out)
		assert.Equal(t, map[string]string{"explore+model=claude-sonnet-4-6": "success", "explore+model=gpt-5.4": "success",
			"delegate": "success"}, sessionStatuses(t, out), run.name)
		answers[run.name] = finalTexts(t, out)
		for _, key := range []string{"explore+model=claude-sonnet-4-6", "explore+model=gpt-5.4"} {
			assert.Equal(t, []retrySeen{{1, "http_429", 100}}, retries(t, streamEvents(t, out, key), true), "%s %s", run.name, key)
		}
		ids := map[string]string{}
		for _, ev := range streamEvents(t, out, "delegate") {
			if ev["type"] == "tool_call" {
				parent, _ := ev["parent_tool_use_id"].(string)
				ids[ev["id"].(string)] = ev["name"].(string) + " in " + parent
			}
		}
		assert.Equal(t, map[string]string{"tc_0_0": "Task in ", "tc_0_0.0_0": "Task in tc_0_0", "tc_0_0.0_0.0_0": "Glob in tc_0_0.0_0"},
			ids, run.name)
	}
	assert.Equal(t, map[string]string{"explore+model=claude-sonnet-4-6": "The spec runs two jobs, one of them on two models.",
		"explore+model=gpt-5.4": "The spec runs two jobs, one of them on two models.", "delegate": "The sub-agent counted two scripts."},
		answers["in-process"])
	assert.Equal(t, answers["in-process"], answers["fake-server"])
}

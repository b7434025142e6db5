package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
)

// openFilesChild names the case TestOpenFilesChild plays in a child process.
const openFilesChild = "AGENTRUN_TEST_OPEN_FILES"

// TestOpenFilesLimit starts this test binary under prlimit(1) with an open-files limit,
// and checks what a run of 100 sessions at once does there: with a hard limit too low
// for them it refuses up front, naming the limit, the concurrency and the fix, and
// writes nothing; with a soft limit too low but a hard one high enough it raises the
// soft limit and runs; with the hard limit it asks for, 300 sessions in their workers at
// strict all pass.
func TestOpenFilesLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sessions in their workers in a child process (not with -short)")
	}
	t.Parallel()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		if os.Getenv("AGENTRUN_REQUIRE_TOOLS") != "" {
			t.Fatalf("prlimit (util-linux) is missing: %v", err)
		}
		t.Skip("prlimit (util-linux) is missing")
	}
	for _, tt := range []struct {
		name, limit, child string
		want               []string
	}{
		{"hard limit too low", "300:300", "as-is", []string{
			"run: open files limit too low: RLIMIT_NOFILE is 300 (hard limit 300), and 100 sessions at once need about 1356",
			"ulimit -Hn 1356", "LimitNOFILE=1356", "--ulimit nofile=1356", "lower concurrency to 4",
			"nothing written",
		}},
		{"hard limit below what the run keeps for itself", "256:256", "as-is", []string{
			"RLIMIT_NOFILE is 256 (hard limit 256), and 100 sessions at once need about 1356",
			"docker run --ulimit nofile=1356) and no concurrency fits this limit", "nothing written",
		}},
		{"soft limit lowered, hard limit enough", "300:4096", "lower-soft", []string{
			"soft limit before the run 300", "ran 100 sessions", "soft limit after the run 4096",
		}},
		// The limit the check asks for and not one more (workerSessions × 11 + 256),
		// below the 4096 open files the sandbox gives tools (which it used to raise to,
		// failing every worker): every session starts its worker at strict at once, and
		// holds it while its Bash call runs.
		{"just the limit the check asks for, every session in its worker", "3556:3556", "workers", []string{
			"ran 300 sessions, 300 passed",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.child == "workers" {
				if err := sandbox.Probe().Supports(sandbox.LevelStrict); err != nil {
					t.Skip(err)
				}
			}
			cmd := exec.Command(prlimit, "--nofile="+tt.limit, os.Args[0], "-test.run", "^TestOpenFilesChild$", "-test.v")
			cmd.Env = append(os.Environ(), openFilesChild+"="+tt.child, "TMPDIR="+t.TempDir())
			wd, err := os.Getwd()
			require.NoError(t, err)
			cmd.Dir = wd
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			for _, w := range tt.want {
				assert.Contains(t, string(out), w)
			}
		})
	}
}

// TestOpenFilesChild is the child of TestOpenFilesLimit: it runs 100 sessions at once
// under the limit its parent set, and prints what happened.
func TestOpenFilesChild(t *testing.T) {
	mode := os.Getenv(openFilesChild)
	if mode == "" {
		t.Skip("run by TestOpenFilesLimit")
	}
	if mode == "lower-soft" {
		// The Go runtime raised the soft limit to the hard one at start-up; lowering it
		// again shows that the run raises it itself.
		var l unix.Rlimit
		require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &l))
		l.Cur = 300
		require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &l))
		fmt.Println("soft limit before the run", softOpenFiles(t))
	}
	dir := t.TempDir()
	n, job := 100, `{id: many, model: answer, repeat: 100, prompt: Say so., sandbox: {level: "off"}}`
	var providers runner.Providers = newInProcess(loadScripts(t))
	if mode == "workers" {
		// Each session holds its worker until all have one: the most open at once.
		n, job = workerSessions, fmt.Sprintf(`{id: many, model: barrier, repeat: %d, prompt: Wait., tools: [Bash],
      sandbox: {level: strict}, workspace: {dir: ., mode: shared}}`, workerSessions)
		require.NoError(t, os.Mkdir(filepath.Join(dir, "arrived"), 0o755))
		// The model over loopback HTTP, as the many-sessions benchmark serves it: each
		// session holds a connection, and the server's end of it is open here too.
		providers = newOverHTTP(t, scriptsWith(t, "barrier", barrierScript))
	}
	spec := writeSpec(t, dir, fmt.Sprintf("version: 1\nconcurrency: %d\njobs:\n  - %s\n", n, job))
	sum := runAndReport(t, dir, spec, providers, runner.ErrOpenFiles)
	if sum == nil {
		return
	}
	fmt.Println("soft limit after the run", softOpenFiles(t))
	assert.Equal(t, n, sum.Totals.Passed, "%s%s", strings.TrimSpace(sum.Text()), failures(sum))
}

// runAndReport runs spec with providers into dir/out, for a child process whose parent
// reads its output: a refusal, which must be refused, is printed with whether it wrote
// nothing (nil is returned); a run, with how many sessions ran and passed.
func runAndReport(t *testing.T, dir string, spec *jobs.Spec, providers runner.Providers, refused error) *runner.Summary {
	t.Helper()
	out := filepath.Join(dir, "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: providers}).Run(context.Background(), spec)
	if err != nil {
		require.ErrorIs(t, err, refused)
		fmt.Println(err)
		if _, serr := os.Stat(out); os.IsNotExist(serr) {
			fmt.Println("nothing written")
		}
		return nil
	}
	fmt.Printf("ran %d sessions, %d passed\n", len(sum.Sessions), sum.Totals.Passed)
	return sum
}

// workerSessions is how many sessions TestOpenFilesChild runs in their workers.
const workerSessions = 300

// barrierScript is a session whose one Bash call ends once workerSessions sessions
// have made theirs: each leaves a file in the shared workspace's folder arrived and
// waits for the others' (a tool's own wait, bounded by its timeout).
var barrierScript = fmt.Sprintf(`steps:
  - tool_calls: [{name: Bash, input: {command: "touch arrived/$$; until [ $(ls arrived | wc -l) -ge %d ]; do sleep 0.05; done", timeout: 120}}]
  - text: "All here."
`, workerSessions)

func softOpenFiles(t *testing.T) uint64 {
	var l unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &l))
	return l.Cur
}

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
)

// openFilesChild names the case TestOpenFilesChild plays in a child process.
const openFilesChild = "AGENTRUN_TEST_OPEN_FILES"

// TestOpenFilesLimit starts this test binary under prlimit(1) with an open-files limit,
// and checks what a run of 100 sessions at once does there: with a hard limit too low
// for them it refuses up front, naming the limit, the concurrency and the fix, and
// writes nothing; with a soft limit too low but a hard one high enough it raises the
// soft limit and runs.
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
		{"soft limit lowered, hard limit enough", "300:4096", "lower-soft", []string{
			"soft limit before the run 300", "ran 100 sessions", "soft limit after the run 4096",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
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
	spec := writeSpec(t, dir, `version: 1
concurrency: 100
jobs:
  - {id: many, model: answer, repeat: 100, prompt: Say so., sandbox: {level: "off"}}
`)
	sum := runAndReport(t, dir, spec, runner.ErrOpenFiles)
	if sum == nil {
		return
	}
	fmt.Println("soft limit after the run", softOpenFiles(t))
	assert.Equal(t, 100, sum.Totals.Passed, strings.TrimSpace(sum.Text()))
}

// runAndReport runs spec with the in-process model into dir/out, for a child process
// whose parent reads its output: a refusal, which must be refused, is printed with
// whether it wrote nothing (nil is returned); a run, with how many sessions ran and
// passed.
func runAndReport(t *testing.T, dir string, spec *jobs.Spec, refused error) *runner.Summary {
	t.Helper()
	out := filepath.Join(dir, "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t))}).Run(context.Background(), spec)
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

func softOpenFiles(t *testing.T) uint64 {
	var l unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &l))
	return l.Cur
}

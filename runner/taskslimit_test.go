package runner_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
)

// tasksChild is the concurrency TestTasksChild runs at in a child process.
const tasksChild = "AGENTRUN_TEST_TASKS"

// TestTasksLimit starts this test binary in a new pids cgroup that allows 400 tasks,
// and checks what a run of 40 sessions with tools does there: at concurrency 40, which
// would need about 544 tasks, it refuses up front, naming the cgroup, its limit, the
// fix and the concurrency that fits, and writes nothing; at 10 it runs every session,
// each in its worker, inside the limit.
func TestTasksLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sessions in their workers in a child process (not with -short)")
	}
	t.Parallel()
	if _, err := sandbox.PidsBase(); err != nil {
		t.Skipf("no writable pids hierarchy (%v) to make a limit in", err)
	}
	for _, tt := range []struct {
		name        string
		concurrency int
		want        []string
	}{
		{"too many at once", 40, []string{
			"run: task limit too low: 40 sessions at once need about 544 tasks (12 each for its worker and tools, 64 for the run)",
			"pids.max of cgroup ", " is 400 and leaves ", "TasksMax=", "--pids-limit", "lower concurrency to ",
			"nothing written",
		}},
		{"fewer at once", 10, []string{"ran 40 sessions, 40 passed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pids, err := sandbox.NewCgroup(sandbox.CgroupLimits{Pids: 400})
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, pids.Remove()) })
			cmd := exec.Command("sh", "-c", `echo $$ > "$1" && shift && exec "$@"`, "sh",
				filepath.Join(pids.Dir(), "cgroup.procs"), os.Args[0], "-test.run", "^TestTasksChild$", "-test.v")
			cmd.Env = append(os.Environ(), tasksChild+"="+strconv.Itoa(tt.concurrency), "TMPDIR="+t.TempDir())
			wd, err := os.Getwd()
			require.NoError(t, err)
			cmd.Dir = wd
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			for _, w := range tt.want {
				assert.Contains(t, string(out), w)
			}
			if tt.concurrency == 40 {
				// The concurrency it names is at least the second case's, which fits.
				_, fit, _ := strings.Cut(string(out), "lower concurrency to ")
				n, err := strconv.Atoi(strings.Fields(fit)[0])
				require.NoError(t, err, "%s", out)
				assert.GreaterOrEqual(t, n, 10, "%s", out)
				assert.Less(t, n, 40)
			}
		})
	}
}

// TestTasksChild is the child of TestTasksLimit: it runs 40 sessions that each write a
// file through their worker, at the concurrency its parent gave, and prints what
// happened.
func TestTasksChild(t *testing.T) {
	c := os.Getenv(tasksChild)
	if c == "" {
		t.Skip("run by TestTasksLimit")
	}
	dir := t.TempDir()
	spec := writeSpec(t, dir, `version: 1
concurrency: `+c+`
defaults: {tools: [Write], workspace: {dir: ., mode: copy}}
jobs:
  - {id: many, model: success, repeat: 40, prompt: Write the notes.}
`)
	if sum := runAndReport(t, dir, spec, newInProcess(loadScripts(t)), runner.ErrTasks); sum != nil {
		assert.Equal(t, 40, sum.Totals.Passed, strings.TrimSpace(sum.Text()))
	}
}

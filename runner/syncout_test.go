package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
)

// syncChild makes TestSyncChild run its sessions.
const syncChild = "AGENTRUN_TEST_SYNC_CHILD"

// syncSessions is how many sessions TestSyncChild runs: more than the fsyncs a run may
// make, so that one fsync per session cannot pass.
const syncSessions = 40

// TestRunSyncsOnce traces the file syncs of a run of 40 sessions with strace(1): the
// sessions' files are made durable by one syncfs when they have ended, not by an fsync
// each; only the run's own files (run.json, the summaries) are synced one by one.
func TestRunSyncsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("traces a child run with strace (not with -short)")
	}
	t.Parallel()
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("AGENTRUN_REQUIRE_TOOLS") != "" {
			t.Fatalf("strace is missing: %v", err)
		}
		t.Skip("strace is missing")
	}
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-e", "trace=fsync,fdatasync,syncfs", "-o", trace,
		os.Args[0], "-test.run", "^TestSyncChild$", "-test.v")
	cmd.Env = append(os.Environ(), syncChild+"=1", "TMPDIR="+t.TempDir())
	cmd.Dir, err = os.Getwd()
	require.NoError(t, err)
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "PTRACE_TRACEME") || strings.Contains(string(out), "Operation not permitted") {
		t.Skipf("strace cannot trace here: %s", out)
	}
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), fmt.Sprintf("ran %d sessions", syncSessions))
	b, err := os.ReadFile(trace)
	require.NoError(t, err)
	count := func(call string) int {
		return len(regexp.MustCompile(`(?m)^\d+\s+`+call+`\(`).FindAll(b, -1))
	}
	assert.Equal(t, 1, count("syncfs"), "one syncfs for the whole run:\n%s", b)
	assert.Less(t, count("fsync")+count("fdatasync"), 10, "the run's own files only, not one per session:\n%s", b)
}

// TestSyncChild is the child of TestRunSyncsOnce.
func TestSyncChild(t *testing.T) {
	if os.Getenv(syncChild) == "" {
		t.Skip("run by TestRunSyncsOnce")
	}
	dir := t.TempDir()
	spec := writeSpec(t, dir, fmt.Sprintf(`version: 1
concurrency: 8
jobs:
  - {id: many, model: answer, repeat: %d, prompt: Say so., sandbox: {level: "off"}}
`, syncSessions))
	sum, err := newRunner(t, runner.Options{Out: filepath.Join(dir, "out"), Providers: newInProcess(loadScripts(t))}).
		Run(context.Background(), spec)
	require.NoError(t, err)
	require.Equal(t, syncSessions, sum.Totals.Passed)
	fmt.Printf("ran %d sessions\n", len(sum.Sessions))
}

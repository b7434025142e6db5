package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
)

// smallDisk mounts a file system of size bytes (a tmpfs) at a new folder and returns
// it; it is unmounted when the test ends.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("mounting a small disk needs root")
	}
	dir := t.TempDir()
	require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size))
	t.Cleanup(func() { assert.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) })
	return dir
}

// TestRunSurvivesAFullDisk: one session's tool fills the disk of the output folder,
// which holds the sessions' copies of the workspace, while another session's tool
// runs. Every session still gets its result.json, the run its summaries and report:
// the run stops once the disk is full, and writes them into the space it reserved.
// Until 2026-12-04 the run lost every result and its summaries.
func TestRunSurvivesAFullDisk(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, "16m")
	out := filepath.Join(disk, "out")
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "proj"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "proj", "a.txt"), []byte("a\n"), 0o644))
	scripts := scriptsWith(t, "fill", `steps:
  - tool_calls: [{name: Bash, input: {command: "head -c 64M /dev/zero > big; echo status=$?"}}]
  - text: "Filled."
`, "slow", `steps:
  - tool_calls: [{name: Bash, input: {command: "sleep 60; echo slept"}}]
  - text: "Slept."
`)
	spec := writeSpec(t, dir, `version: 1
concurrency: 2
defaults: {tools: [Bash], bash_mode: "7777", sandbox: {level: "off"}, workspace: {dir: proj, mode: copy}}
jobs:
  - {id: slow, model: slow, prompt: Sleep.}
  - {id: fill, model: fill, prompt: Fill the disk.}
  - {id: later, model: slow, prompt: Sleep later.}
`)
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
		Run(context.Background(), spec)
	require.NoError(t, err, "the run's reports were written")
	require.Len(t, sum.Sessions, 3)
	for _, key := range []string{"slow", "fill", "later"} {
		b, err := os.ReadFile(filepath.Join(out, runner.SessionsDir, key, runner.ResultFile))
		require.NoError(t, err, "session %s has its result", key)
		var res protocol.Result
		require.NoError(t, json.Unmarshal(b, &res), "%s", b)
		if key != "fill" {
			assert.Equal(t, protocol.StatusCancelled, res.Status, key)
			require.NotNil(t, res.Error, key)
			assert.Contains(t, res.Error.Message, "the disk of "+out, key)
		}
	}
	for _, name := range []string{runner.SummaryFile, runner.SummaryMDFile, runner.JUnitFile, runner.ReportFile} {
		assert.FileExists(t, filepath.Join(out, name))
	}
	var s runner.Summary
	b, err := os.ReadFile(filepath.Join(out, runner.SummaryFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &s), "summary.json is whole")
	assert.NoFileExists(t, filepath.Join(out, runner.ReserveFile), "the reserve is released")
	readEvents(t, filepath.Join(out, runner.SessionsDir, "slow", runner.EventsFile), true)
}

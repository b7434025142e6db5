package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
)

// smallDisk mounts a file system of size bytes (a tmpfs) at a new folder and returns
// it; it is unmounted when the test ends. More are more mount options ("nr_inodes=N").
func smallDisk(t *testing.T, size string, more ...string) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("mounting a small disk needs root")
	}
	dir := t.TempDir()
	require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, strings.Join(append([]string{"size=" + size}, more...), ",")))
	t.Cleanup(func() { assert.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) })
	return dir
}

// TestRunSurvivesAFullDisk: one session's tool fills the disk of the output folder,
// which holds the sessions' copies of the workspace, while another session's tool
// runs: with bytes, or with files until the disk has no inode left (a test suite's
// fixtures, an unpacked cache), where a free byte is of no use. Every session still
// gets its result.json, the run its summaries and report: the run stops once the disk
// is full, and writes them into the space and the inodes it reserved, and the rooms
// made for each result and report. Until 2026-12-04 the run lost every result and its
// summaries to the bytes, and to the inodes it still did; and on a loaded machine, a
// result or the summary to the tool that went on taking each part of the reserve the
// guard gave up.
func TestRunSurvivesAFullDisk(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		mount []string
		fill  string
	}{
		"bytes":  {nil, "head -c 64M /dev/zero > big; echo status=$?"},
		"inodes": {[]string{"nr_inodes=2000"}, "mkdir many; for i in $(seq 3000); do : > many/$i; done 2>/dev/null; echo status=$?"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runFillingTheDisk(t, smallDisk(t, "16m", c.mount...), c.fill)
		})
	}
}

// runFillingTheDisk runs three sessions, one of which runs fill, with the output folder
// on disk, and checks that every session got its result and the run its reports.
func runFillingTheDisk(t *testing.T, disk, fill string) {
	t.Helper()
	out := filepath.Join(disk, "out")
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "proj"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "proj", "a.txt"), []byte("a\n"), 0o644))
	scripts := scriptsWith(t, "fill", `steps:
  - tool_calls: [{name: Bash, input: {command: "`+fill+`"}}]
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
	assert.NoDirExists(t, filepath.Join(out, runner.ReserveInodes), "the reserve of inodes is released")
	// Each stream holds whole lines. A session that could not even make its folder on
	// the full disk has none, only its result.
	for _, key := range []string{"slow", "fill", "later"} {
		if p := filepath.Join(out, runner.SessionsDir, key, runner.EventsFile); key == "fill" || fileExists(p) {
			readEvents(t, p, true)
		}
	}
}

// fileExists reports whether path is there.
func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

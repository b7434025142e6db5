package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/sandbox"
)

// TestRunRefusedByTaskLimit runs agentrun in a new pids cgroup that allows 300 tasks,
// on a spec of 50 sessions with tools at once: it exits 2 before any session starts,
// names the cgroup, its limit, the fix and the concurrency that fits, and writes no
// output folder.
func TestRunRefusedByTaskLimit(t *testing.T) {
	t.Parallel()
	pids, err := sandbox.NewCgroup(sandbox.CgroupLimits{Pids: 300})
	if err != nil {
		t.Skipf("no writable pids hierarchy (%v) to make a limit in", err)
	}
	t.Cleanup(func() { assert.NoError(t, pids.Remove()) })
	cgroup := pids.Dir()
	dir := t.TempDir()
	spec := writeFile(t, dir, "spec.yaml", `version: 1
concurrency: 50
defaults: {provider: scripted, tools: [Bash], sandbox: {level: "off"}}
jobs:
  - {id: many, prompt: Look around., repeat: 50}
`)
	out := filepath.Join(dir, "out")
	o := agentrun(t, invocation{bin: "sh", args: []string{"-c", `echo $$ > "$1" && shift && exec "$@"`, "sh",
		filepath.Join(cgroup, "cgroup.procs"), agentrunBin(t), "run", spec, "--out", out}})
	assert.Equal(t, 2, o.code, "stderr:\n%s", o.stderr)
	assert.Contains(t, o.stderr, "task limit too low: 50 sessions at once need about 664 tasks (12 each for its worker and tools, 64 for the run)")
	assert.Contains(t, o.stderr, "the pids.max of cgroup "+cgroup+" is 300 and leaves ")
	assert.Contains(t, o.stderr, "TasksMax=")
	assert.Regexp(t, `lower concurrency to 1\d\b`, o.stderr)
	assert.NoDirExists(t, out, "nothing ran")
}

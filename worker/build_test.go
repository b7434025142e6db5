package worker_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/worker"
)

// TestWorkerOfAnotherBuildIsRefused starts a worker whose agentrun claims another
// build: the worker refuses before it runs anything, so the command never runs (its
// file is not there) and the error says which binary to reinstall.
func TestWorkerOfAnotherBuildIsRefused(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	cfg := worker.Config{
		Build:    "go0.0 example.com/agentrun@v0.0.1",
		Spec:     sandbox.Spec{Level: sandbox.LevelOff, Workspace: ws},
		Env:      []string{"PATH=/usr/bin:/bin"},
		BashMode: "7777", Timeout: time.Minute, IdleExit: time.Hour,
	}
	c := worker.New(cfg, os.Args[0], nil)
	t.Cleanup(func() { assert.NoError(t, c.Close()) })
	out, isErr := bash(t, c, "touch ran")
	assert.True(t, isErr, out)
	assert.Contains(t, out, "from another build")
	assert.Contains(t, out, "example.com/agentrun@v0.0.1")
	assert.Contains(t, out, "install both from one build")
	assert.NoFileExists(t, filepath.Join(ws, "ran"), "nothing ran in a worker of another build")
	_, isErr = bash(t, c, "true")
	require.True(t, isErr, "the next call is refused too")
}

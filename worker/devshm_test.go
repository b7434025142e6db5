package worker_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/worker"
)

// TestWorkspaceOnDevShm runs a strict worker whose workspace lies below /dev (a tmpfs
// workspace, as the benchmarks use): the sandbox's own /dev must not hide it.
func TestWorkspaceOnDevShm(t *testing.T) {
	t.Parallel()
	if err := sandbox.Probe().Supports(sandbox.LevelStrict); err != nil {
		t.Skip(err)
	}
	ws, err := os.MkdirTemp("/dev/shm", "agentrun-ws-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(ws) })
	m, err := sandbox.ParseMode("0467")
	require.NoError(t, err)
	cfg := worker.Config{Spec: sandbox.Spec{Level: sandbox.LevelStrict, Mode: m, Workspace: ws, Home: ws},
		Env: []string{"PATH=/usr/bin:/bin", "HOME=" + ws}, BashMode: "0467", Timeout: time.Minute}
	c := worker.New(cfg, os.Args[0], nil)
	defer func() { assert.NoError(t, c.Close()) }()
	r := c.Exec(context.Background(), "echo hi > made.txt", time.Minute, 0)
	require.NoError(t, r.Err)
	require.Zero(t, r.ExitCode, r.Output)
	b, err := os.ReadFile(filepath.Join(ws, "made.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hi\n", string(b))
}

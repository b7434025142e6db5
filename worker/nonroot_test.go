package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/worker"
)

// scenarioEnv names a scenario that the test binary runs instead of its tests.
const scenarioEnv = "WORKER_TEST_SCENARIO"

// nonRootScenario runs one Bash call in a strict sandbox as whatever user this process
// is, in the workspace named by WORKER_TEST_WS, and prints the result.
func nonRootScenario() int {
	return oneBashCall(sandbox.LevelStrict, os.Getenv("WORKER_TEST_WS"), "touch made-by-nonroot && id -u")
}

// oneBashCall runs command through the Bash tool of a worker at level, under bash_mode
// 0467, whose workspace and home are ws, prints the result and returns the exit code
// of a scenario: 1 when the call failed.
func oneBashCall(level sandbox.Level, ws, command string) int {
	c := scenarioClient(level, ws)
	r := scenarioBash(c, command)
	if err := c.Close(); err != nil {
		fmt.Println("close:", err)
	}
	fmt.Print(r.Content)
	if r.IsError {
		return 1
	}
	return 0
}

// scenarioClient is the client of a scenario's worker at level, under bash_mode 0467,
// whose workspace and home are ws, started from this test binary.
func scenarioClient(level sandbox.Level, ws string) *worker.Client {
	m, _ := sandbox.ParseMode("0467")
	spec := sandbox.Spec{Level: level, Mode: m, Workspace: ws, Home: ws}
	if level == sandbox.LevelLandlock {
		spec.TempDir = filepath.Join(ws, "tmp")
		_ = os.Mkdir(spec.TempDir, 0o755) // the call fails if it is missing
	}
	cfg := worker.Config{Spec: spec, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + ws}, BashMode: "0467", Timeout: time.Minute}
	cfg.Hidden = spec.Hidden()
	return worker.New(cfg, os.Args[0], nil)
}

// scenarioBash runs command through c's Bash tool.
func scenarioBash(c *worker.Client, command string) tools.Result {
	in, _ := json.Marshal(map[string]string{"command": command})
	return c.RunTool(context.Background(), "Bash", in)
}

// TestNonRootStrict runs a strict sandbox as an unprivileged user (as root, the test
// binary starts a copy of itself as uid 65534): the tool's file lands in the workspace,
// owned by that user. It is not parallel: it writes the copy it starts, and a fork
// of another test between that write and its close would keep the file open for
// writing in the child, so that starting it fails with "text file busy".
func TestNonRootStrict(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("already not root: the other tests cover it")
	}
	bin := filepath.Join(t.TempDir(), "worker.test")
	src, err := os.Open(os.Args[0])
	require.NoError(t, err)
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, src.Close())
	require.NoError(t, dst.Close())
	// t.TempDir's folders are private to root; the unprivileged user must reach them.
	require.NoError(t, os.Chmod(filepath.Dir(bin), 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(filepath.Dir(bin)), 0o755))
	ws := t.TempDir()
	require.NoError(t, os.Chmod(ws, 0o755))
	require.NoError(t, os.Chown(ws, 65534, 65534))
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = []string{scenarioEnv + "=nonroot", "WORKER_TEST_WS=" + ws, "PATH=/usr/bin:/bin"}
	cmd.Dir = ws
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "0\n", "inside, the user is root of its own namespace")
	fi, err := os.Stat(filepath.Join(ws, "made-by-nonroot"))
	require.NoError(t, err, "%s", out)
	assert.Equal(t, uint32(65534), fi.Sys().(*syscall.Stat_t).Uid, "outside, the file is the unprivileged user's")
}

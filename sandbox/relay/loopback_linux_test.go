package relay

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/testexit"
)

// inNewNetns runs this test binary's runChild(mode) in new user and network
// namespaces and returns what it printed.
func inNewNetns(t *testing.T, mode string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "GORACE="+testexit.QuickExit)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.Output()
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) {
		t.Skipf("user and network namespaces unavailable: %v", err)
	}
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

func TestLoopbackUp(t *testing.T) {
	t.Run("without", func(t *testing.T) {
		out := inNewNetns(t, "down")
		assert.NotEqual(t, "ok", out, "a new network namespace's loopback starts down")
		assert.Regexp(t, `^(listen|dial): `, out)
	})
	t.Run("with", func(t *testing.T) {
		assert.Equal(t, "ok", inNewNetns(t, "up"))
	})
	t.Run("already up", func(t *testing.T) {
		require.NoError(t, LoopbackUp(), "lo is up in the test's own namespace, so this changes nothing")
	})
}

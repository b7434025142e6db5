package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/testexit"
)

func init() {
	childScenarios["loopback-down"] = func() int { return loopbackProbe(false) }
	childScenarios["loopback-up"] = func() int { return loopbackProbe(true) }
}

// loopbackProbe runs in a fresh network namespace: with up it brings lo up first, then
// either way it listens on 127.0.0.1 and connects to itself, printing "ok" or the step
// that failed.
func loopbackProbe(up bool) int {
	if up {
		if err := LoopbackUp(); err != nil {
			fmt.Println("up:", err)
			return 0
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return 0
	}
	defer func() { _ = l.Close() }()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		fmt.Println("dial:", err)
		return 0
	}
	defer func() { _ = c.Close() }()
	s, err := l.Accept()
	if err != nil {
		fmt.Println("accept:", err)
		return 0
	}
	defer func() { _ = s.Close() }()
	if _, err := c.Write([]byte("x")); err != nil {
		fmt.Println("write:", err)
		return 0
	}
	b := make([]byte, 1)
	if _, err := s.Read(b); err != nil {
		fmt.Println("read:", err)
		return 0
	}
	_, _ = fmt.Fprintln(os.Stdout, "ok")
	return 0
}

// inNewNetns runs this test binary's scenario in new user and network namespaces and
// returns what it printed.
func inNewNetns(t *testing.T, scenario string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+scenario, "GORACE="+testexit.QuickExit)
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
		out := inNewNetns(t, "loopback-down")
		assert.NotEqual(t, "ok", out, "a new network namespace's loopback starts down")
		assert.Regexp(t, `^(listen|dial): `, out)
	})
	t.Run("with", func(t *testing.T) {
		assert.Equal(t, "ok", inNewNetns(t, "loopback-up"))
	})
	t.Run("already up", func(t *testing.T) {
		require.NoError(t, LoopbackUp(), "lo is up in the test's own namespace, so this changes nothing")
	})
}

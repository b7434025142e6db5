package worker_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/sandbox"
)

func init() { childScenarios["tty"] = ttyScenario }

// ttyScenario, run with a controlling terminal, starts a worker of the level in
// WORKER_TEST_LEVEL whose tool writes a line to /dev/tty, the terminal of its session.
func ttyScenario() int {
	return oneBashCall(sandbox.Level(os.Getenv("WORKER_TEST_LEVEL")), os.Getenv("WORKER_TEST_WS"),
		"echo typed-by-a-tool >/dev/tty && echo wrote; true")
}

// TestToolsHaveNoTerminal runs a worker from a process with a controlling terminal, as
// agentrun run in a terminal is: its tools must not reach that terminal through
// /dev/tty, where they could write escape sequences to the user's screen or read what
// the user types. The worker leads a session of its own, which has no terminal.
func TestToolsHaveNoTerminal(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, root string) {
		master, slave := openPty(t)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), scenarioEnv+"=tty", "WORKER_TEST_WS="+root, "WORKER_TEST_LEVEL="+string(level))
		cmd.Stdin = slave
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		require.NoError(t, cmd.Start())
		require.NoError(t, slave.Close())
		screen := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(master) // EIO once the last holder of the terminal is gone
			screen <- b
		}()
		require.NoError(t, cmd.Wait(), out.String())
		require.NoError(t, master.Close())
		seen := <-screen
		assert.NotContains(t, string(seen), "typed-by-a-tool", "ESCAPE at level %s: a tool wrote to the runner's terminal", level)
		assert.NotContains(t, out.String(), "wrote", "a tool opened the runner's terminal")
	})
}

// openPty opens a new pseudo-terminal pair.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	master = os.NewFile(uintptr(fd), "ptmx")
	unlock := 0
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, unlock))
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	require.NoError(t, err)
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	return master, slave
}

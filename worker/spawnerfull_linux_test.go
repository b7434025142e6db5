package worker_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/worker"
)

func init() { childScenarios["spawner-full"] = spawnerFullScenario }

// spawnerFullScenario starts a strict worker through a spawner, then starts another
// with this process's file table full but for the new worker's pipes, so that the
// spawner's reply cannot bring the new worker's pidfd, and prints how the second call
// ended and what became of the first worker.
func spawnerFullScenario() int {
	ws := os.Getenv("WORKER_TEST_WS")
	// A small table, so that filling it is quick; lowering needs no privilege.
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 512, Max: 512}); err != nil {
		fmt.Println("setrlimit:", err)
		return 1
	}
	sp := worker.NewSpawner()
	defer func() { _ = sp.Close() }()
	client := func() *worker.Client {
		c := scenarioClient(sandbox.LevelStrict, ws)
		c.SetSpawner(sp)
		return c
	}
	run := func(c *worker.Client, command string) string {
		return strings.TrimSpace(scenarioBash(c, command).Content)
	}
	first, second := client(), client()
	defer func() { _, _ = first.Close(), second.Close() }()
	fmt.Println("first=" + run(first, "echo a"))
	pid := first.PID()
	var held []int
	for {
		fd, err := unix.Dup(0)
		if err != nil {
			break
		}
		held = append(held, fd)
	}
	// Room for the six ends of a start's three pipes, and nothing more.
	for _, fd := range held[len(held)-6:] {
		_ = unix.Close(fd)
	}
	held = held[:len(held)-6]
	fmt.Println("second=" + strings.ReplaceAll(run(second, "echo b"), "\n", " "))
	for _, fd := range held {
		_ = unix.Close(fd)
	}
	fmt.Println("first_alive=", syscall.Kill(pid, 0) == nil)
	fmt.Println("first_again=" + run(first, "echo again"))
	fmt.Println("first_starts=", first.Starts())
	return 0
}

// TestSpawnerReplyWithoutRoom starts a worker whose pidfd the runner has no room to
// receive, in a child process with a small open-files limit: that start fails, saying
// so, and the other sessions' workers, which die with the spawner's process, go on in
// the process they had. (The spawner used to be taken for broken and restarted, which
// ended every worker of the run.)
func TestSpawnerReplyWithoutRoom(t *testing.T) {
	if err := sandbox.Probe().Supports(sandbox.LevelStrict); err != nil {
		t.Skip(err)
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), scenarioEnv+"=spawner-full", "WORKER_TEST_WS="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	got := string(out)
	assert.Contains(t, got, "first=a\n")
	assert.Contains(t, got, "second=worker spawner: ")
	assert.Contains(t, got, "too many open files")
	assert.Contains(t, got, "first_alive= true\n")
	assert.Contains(t, got, "first_again=again\n")
	assert.Contains(t, got, "first_starts= 1\n", "the first session's worker was started again")
}

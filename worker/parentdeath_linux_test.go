package worker_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/worker"
)

func init() {
	childScenarios["parent-death-parent"] = parentDeathParent
	childScenarios["parent-death-child"] = parentDeathChild
}

// TestExecKeepsParentDeath checks that a process which execs from a thread other than
// its first, as stage 1 does when it becomes stage 2 from its confined thread, still
// dies with its parent: the parent-death signal is the kernel's per thread, and only
// the exec'ing thread survives an exec. Without it a worker whose runner was killed
// outlived it, holding its sandbox.
func TestExecKeepsParentDeath(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), scenarioEnv+"=parent-death-parent")
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err, "%q", out)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	waitEnded(t, pid) // its parent, the scenario's, has exited
}

// parentDeathParent starts parentDeathChild, dying with this process, waits until it
// has exec'd (its copy of a close-on-exec pipe closes then), prints its pid and exits.
func parentDeathParent() int {
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), scenarioEnv+"=parent-death-child")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.ExtraFiles = []*os.File{w} // its fd 3; its stdio is /dev/null, so that nothing
	// waits on a pipe the sleep it becomes would hold
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = w.Close()
	if _, err := io.Copy(io.Discard, r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(cmd.Process.Pid)
	return 0
}

// parentDeathChild execs sleep from a thread other than the process's first, with
// its fd 3 close-on-exec, so that its parent knows when the exec is done.
func parentDeathChild() int {
	done := make(chan error)
	var start func()
	start = func() {
		go func() {
			runtime.LockOSThread() // never unlocked: the first thread stays taken
			if unix.Gettid() == os.Getpid() {
				start()
				select {}
			}
			syscall.CloseOnExec(3)
			done <- worker.ExecDyingWithParent("/bin/sleep", []string{"sleep", "60"}, nil)
		}()
	}
	start()
	fmt.Fprintln(os.Stderr, <-done)
	return 1
}

package worker

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/agentrun/agentrun/sandbox"
)

// child is a started worker process, as the runner sees it.
type child interface {
	// pid is its process id.
	pid() int
	// wait returns once it has ended and its stderr has been read to the end, or a
	// second after its end when other processes still hold its stderr open.
	wait() error
	// kill sends it SIGKILL.
	kill() error
}

// stderrGrace bounds the wait for a worker's stderr once the worker has ended.
const stderrGrace = time.Second

// execChild is a worker the runner started itself.
type execChild struct{ cmd *exec.Cmd }

func (c execChild) pid() int    { return c.cmd.Process.Pid }
func (c execChild) wait() error { return c.cmd.Wait() }
func (c execChild) kill() error { return c.cmd.Process.Signal(syscall.SIGKILL) }

// execWorker starts binary as a worker at level, with files as its fds from 3 on
// (fdRequests, fdReplies and, at level strict with network, fdHandOff); what it
// writes to its stderr goes to w.
func execWorker(binary string, level sandbox.Level, files []*os.File, w io.Writer) (child, error) {
	cmd := exec.Command(binary, Command)
	cmd.Env = workerEnv
	cmd.Dir = "/"
	cmd.ExtraFiles = files
	cmd.Stderr = w
	cmd.SysProcAttr = sandbox.SysProcAttr(level)
	cmd.WaitDelay = stderrGrace
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("worker: start %s sandbox: %w", level, err)
	}
	return execChild{cmd}, nil
}

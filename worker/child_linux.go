package worker

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/sandbox"
)

// spawnWorker starts a worker at level through s, with files as its fds from 3 on
// (fdRequests, fdReplies and, at level strict with network, fdHandOff); what it
// writes to its stderr goes to w.
func spawnWorker(s *Spawner, binary string, level sandbox.Level, files []*os.File, w io.Writer) (child, error) {
	r, wr, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	pid, pidfd, err := s.spawn(binary, level, append([]*os.File{wr}, files...)...)
	_ = wr.Close()
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	c, err := newSpawnedChild(pid, pidfd, r, w)
	if err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		_ = r.Close()
		return nil, fmt.Errorf("worker: %w", err)
	}
	return c, nil
}

// spawnedChild is a worker that a Spawner started: another process is its parent and
// reaps it, so the runner knows its end from a pidfd, which also makes its kill safe
// from the reuse of its pid.
type spawnedChild struct {
	id     int
	pidfd  *os.File // non-blocking, so that waiting on it parks no thread
	stderr *os.File // the read end of the worker's stderr
	copied chan struct{}
}

// newSpawnedChild takes the pidfd of process id and the read end of its stderr, and
// copies the stderr to w until its end.
func newSpawnedChild(id, pidfd int, stderr *os.File, w io.Writer) (*spawnedChild, error) {
	if err := unix.SetNonblock(pidfd, true); err != nil {
		_ = unix.Close(pidfd)
		return nil, fmt.Errorf("pidfd: %w", err)
	}
	c := &spawnedChild{id: id, pidfd: os.NewFile(uintptr(pidfd), "pidfd"), stderr: stderr, copied: make(chan struct{})}
	go func() {
		defer close(c.copied)
		_, _ = io.Copy(w, stderr)
	}()
	return c, nil
}

func (c *spawnedChild) pid() int { return c.id }

// kill signals through the pidfd while holding it, so that a wait closing it at once
// cannot make the signal go to whatever the number is reused for.
func (c *spawnedChild) kill() error {
	rc, err := c.pidfd.SyscallConn()
	if err != nil {
		return fmt.Errorf("kill worker %d: %w", c.id, err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.PidfdSendSignal(int(fd), unix.SIGKILL, nil, 0) }); err != nil {
		return fmt.Errorf("kill worker %d: %w", c.id, err) // closed: it has ended and been waited for
	}
	return serr
}

func (c *spawnedChild) wait() error {
	err := c.waitExit()
	select {
	case <-c.copied:
	case <-time.After(stderrGrace):
	}
	_ = c.stderr.Close() // ends the copy, if a process the worker started holds its stderr
	<-c.copied
	_ = c.pidfd.Close()
	return err
}

// waitExit returns once the process has ended: its pidfd polls readable.
func (c *spawnedChild) waitExit() error {
	exited := func(fd uintptr) bool {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(p, 0)
			if !errors.Is(err, unix.EINTR) {
				return n > 0
			}
		}
	}
	rc, err := c.pidfd.SyscallConn()
	if err != nil {
		return fmt.Errorf("wait for worker %d: %w", c.id, err)
	}
	if err := rc.Read(exited); err != nil {
		return fmt.Errorf("wait for worker %d: %w", c.id, err)
	}
	return nil
}

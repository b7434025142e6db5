package worker

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"sync"
)

// Frames between a Spawner and its process, one to a message of a SOCK_SEQPACKET pair.
const (
	frameSpawn   = "SPAWN"   // runner → spawner: level, binary; its stderr and its fds from 3 on as rights
	frameSpawned = "SPAWNED" // spawner → runner: pid; its pidfd as a right
	// A spawner that cannot start a worker replies frameFail and why.
)

// Spawner starts the workers of level strict from a small process of its own, the
// worker binary run as a spawner, instead of from the caller. A child born in a new user
// namespace cannot share its parent's memory until it has executed (Go's os/exec forks
// it rather than vforking), so every such start from a runner of hundreds of megabytes
// copied the runner's page tables, and the runner then faulted on each page it wrote
// next; the spawner's few megabytes are cheap to copy. One Spawner serves all of a run's
// sessions; it starts its process at the first worker, and again after that process has
// died. It also gives the run's worker starts of every level their turns (take), so that
// those waiting hold no descriptors. Its zero value is not usable: call NewSpawner.
type Spawner struct {
	turn   sync.Mutex // held by the one worker start whose descriptors are open
	mu     sync.Mutex // one start at a time; guards the rest
	cmd    *exec.Cmd
	conn   *net.UnixConn
	stderr *tailBuffer
	closed bool
	// buf and oob take the replies, one at a time, made at the first.
	buf, oob []byte
}

// NewSpawner returns a spawner whose process is not started yet.
func NewSpawner() *Spawner { return &Spawner{} }

// take waits for the turn of one worker start and returns its end. Without a spawner
// every start has its turn at once.
func (s *Spawner) take() (release func()) {
	if s == nil {
		return func() {}
	}
	s.turn.Lock()
	return s.turn.Unlock
}

// Close ends the spawner's process, and with it every worker it started that is still
// running (they die with their parent): call it once the run's workers have been closed.
// No worker starts through it afterwards.
func (s *Spawner) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.stop()
}

// stop closes the process's socket, on which it exits, and waits for it.
func (s *Spawner) stop() error {
	if s.cmd == nil {
		return nil
	}
	_ = s.conn.Close()
	err := s.cmd.Wait()
	s.cmd, s.conn = nil, nil
	if err != nil {
		return fmt.Errorf("worker spawner: %w%s", err, tailOf(s.stderr))
	}
	return nil
}

// errSpawnerClosed is the error of a start after Close.
var errSpawnerClosed = errors.New("worker spawner: closed")

// tailOf is ": " and the end of what a process wrote to its stderr, if anything.
func tailOf(t *tailBuffer) string {
	if s := t.String(); s != "" {
		return ": " + s
	}
	return ""
}

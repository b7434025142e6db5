package worker

import (
	"os"
	"os/exec"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/agent/tools"
)

// maxOOMScore is the oom_score_adj of the tools' processes: the kernel's first choice
// when memory runs out, the session's limit or the machine's.
const maxOOMScore = "1000"

// openOOMScore opens this process's oom_score_adj for stage 2, across the exec that
// makes this process stage 2 (not close-on-exec): confined, stage 2 may not open it,
// and it must score each tool's process as it starts it. -1 when it cannot.
func openOOMScore() int {
	fd, err := unix.Open("/proc/self/oom_score_adj", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	// Above the numbers stage 2 is given (requests, replies, config): a copy that the
	// exec keeps.
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD, oomScoreFDFloor)
	_ = unix.Close(fd)
	if err != nil {
		return -1
	}
	return high
}

// oomScoreFDFloor is the least descriptor number of the worker's oom_score_adj.
const oomScoreFDFloor = 16

// victims starts the tools' processes through next with the highest OOM score, and
// keeps the worker's own: a session that reaches its memory limit loses a tool's
// process, not its worker. The largest process is the kernel's choice between equal
// scores, and the worker, a Go program, is larger than most tools and all that is left
// to choose when the memory is in the scratch space, which is no process's. A child
// takes its score from its parent when it starts, so the worker holds the highest score
// while one starts, and its own again right after; its starts are serialised.
type victims struct {
	next  tools.Procs
	score *os.File // the worker's oom_score_adj, opened by stage 1
	own   []byte   // the worker's own score
	mu    sync.Mutex
}

// preferVictims is next (the worker's reaper) with the tools' processes started by
// victims, where stage 1 passed the worker's oom_score_adj as descriptor fd (past
// stderr); next alone otherwise.
func preferVictims(next tools.Procs, fd int) tools.Procs {
	if next == nil || fd <= 2 {
		return next
	}
	f := os.NewFile(uintptr(fd), "oom_score_adj")
	buf := make([]byte, 16)
	n, _ := f.ReadAt(buf, 0) // io.EOF with the score
	if n == 0 {
		_ = f.Close()
		return next
	}
	return &victims{next: next, score: f, own: []byte(strings.TrimSpace(string(buf[:n])))}
}

// Start starts cmd with the highest OOM score.
func (v *victims) Start(cmd *exec.Cmd) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	// A failed write leaves the score as it was: the process starts all the same.
	_, _ = v.score.WriteAt([]byte(maxOOMScore), 0)
	err := v.next.Start(cmd)
	_, _ = v.score.WriteAt(v.own, 0)
	return err
}

// Wait waits for cmd through next.
func (v *victims) Wait(cmd *exec.Cmd) error { return v.next.Wait(cmd) }

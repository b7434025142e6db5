//go:build unix

package worker

import (
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// orphans reaps the processes a worker adopts, as pid 1 of the sandbox or as a child
// subreaper, without taking the exit of a child that a tool waits for itself: the
// tools start and wait for their processes through it (tools.Procs), and it reaps only
// the children it was not asked to start. Its zero value is not usable: call
// newOrphans.
type orphans struct {
	mu  sync.Mutex
	own map[int]*exec.Cmd // started through Start and not yet waited for
}

func newOrphans() *orphans { return &orphans{own: map[int]*exec.Cmd{}} }

// Start starts cmd and keeps its pid from the reaper until Wait: under the lock, so
// that no scan sees the new child before it is known.
func (o *orphans) Start(cmd *exec.Cmd) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	o.own[cmd.Process.Pid] = cmd
	return nil
}

// Wait waits for cmd, then reaps: an orphan that ended while its pid was cmd's has
// been missed by the scans in between.
func (o *orphans) Wait(cmd *exec.Cmd) error {
	err := cmd.Wait()
	o.mu.Lock()
	if o.own[cmd.Process.Pid] == cmd {
		delete(o.own, cmd.Process.Pid)
	}
	o.mu.Unlock()
	o.reap()
	return err
}

// reap collects every child that has ended and is not waited for elsewhere.
func (o *orphans) reap() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, pid := range Children(os.Getpid()) {
		if o.own[pid] != nil {
			continue
		}
		var ws syscall.WaitStatus
		for {
			if _, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); err != syscall.EINTR {
				break
			}
		}
	}
}

// onChildExit runs collect at once and again at every SIGCHLD, until stop closes: the
// one loop of the worker's reapers (the spawner's, which waits for any child, and
// orphans.reap).
func onChildExit(stop <-chan struct{}, collect func()) {
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	defer signal.Stop(chld)
	for {
		collect()
		select {
		case <-chld:
		case <-stop:
			return
		}
	}
}

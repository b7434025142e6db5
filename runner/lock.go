package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// LockFile is the run lock in the output folder.
const LockFile = ".agentrun.lock"

// runLock is an exclusive flock on the output folder, so that two overlapping runs (a
// slow cron run and the next one) never write the same artifacts. The kernel drops it
// when the process dies, so a killed run never leaves a stale lock.
type runLock struct {
	f *os.File
}

func acquireLock(out string) (*runLock, error) {
	path := filepath.Join(out, LockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := tryLock(f); err != nil {
		holder, _ := os.ReadFile(path)
		_ = f.Close() // it holds no lock and was not written
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s (held by %s)", ErrLocked, out, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		// The pid is for people who find the lock held; the lock itself is the flock.
		_, _ = fmt.Fprintf(f, "pid %d\n", os.Getpid())
	}
	return &runLock{f: f}, nil
}

// tryLock takes an exclusive flock on f without waiting: EWOULDBLOCK when a live
// process holds it. The kernel drops it when its holder dies, so a lock that can be
// taken is no live run's.
func tryLock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

func (l *runLock) release() {
	// Closing the file releases the flock too: an unlock that fails is undone by the
	// close, and a close that fails leaves the lock to end with the process.
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}

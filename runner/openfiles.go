package runner

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ErrOpenFiles is wrapped by the error of a run whose open-files limit cannot hold the
// sessions it would run at once: nothing runs (exit 2).
var ErrOpenFiles = errors.New("open files limit too low")

// The file descriptors a run holds: filesPerSession for each running session, 11 as
// measured by BenchmarkManySessions (runner-fds/session: stream.jsonl, transcript.txt,
// events.jsonl, messages.jsonl, the worker's two pipes, its stderr and pidfd, the
// model's connection, and there the loopback server's end of it), and filesPerRun for
// the rest (run.log, the lock, idle connections, the Go runtime's own).
const (
	filesPerSession = 11
	filesPerRun     = 256
)

// openFiles is the RLIMIT_NOFILE of the process: soft (in force) and hard (the most
// an unprivileged process may raise it to).
type openFiles struct{ soft, hard uint64 }

// raiseOpenFiles raises the soft RLIMIT_NOFILE to the hard limit and returns the limits
// then in force. The Go runtime does the same at start-up (since Go 1.19); doing it here
// too makes the run's limit the hard one whoever lowered it since. It goes through
// x/sys/unix, not syscall, so that os/exec still gives tools the soft limit the process
// started with.
func raiseOpenFiles() (openFiles, error) {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err != nil {
		return openFiles{}, fmt.Errorf("open files limit: %w", err)
	}
	if l.Cur < l.Max {
		raised := unix.Rlimit{Cur: l.Max, Max: l.Max}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &raised); err == nil {
			l.Cur = l.Max
		}
		// Else the soft limit stays what it was, and checkOpenFiles judges that.
	}
	return openFiles{soft: l.Cur, hard: l.Max}, nil
}

// checkOpenFiles raises the open-files limit and refuses a run whose running sessions
// would not fit in it, before any of them starts: a run that hits the limit midway
// fails sessions with "too many open files" one by one instead.
func checkOpenFiles(running int) error {
	l, err := raiseOpenFiles()
	if err != nil {
		return err
	}
	need := uint64(running)*filesPerSession + filesPerRun
	if l.soft >= need {
		return nil
	}
	fit := 0
	if l.soft > filesPerRun {
		fit = int((l.soft - filesPerRun) / filesPerSession)
	}
	return fmt.Errorf("%w: RLIMIT_NOFILE is %d (hard limit %d), and %d sessions at once need about %d "+
		"(%d each, %d for the run): raise the hard limit (ulimit -Hn %d as root, LimitNOFILE=%d in a systemd unit, "+
		"docker run --ulimit nofile=%d) %s",
		ErrOpenFiles, l.soft, l.hard, running, need, filesPerSession, filesPerRun, need, need, need, lowerConcurrency(fit, "this limit"))
}

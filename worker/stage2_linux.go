package worker

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/protocol"
)

// execInPlace says that stage 1 can become stage 2 by exec (becomeStage2).
const execInPlace = true

// becomeStage2 replaces this process with stage 2, in dir, passing it the config
// raw in a memory file: only the calling thread survives an exec, and it is the one
// confineThread confined, so stage 2 starts with every layer as a forked child of
// that thread would. The requests and replies stay where stage 2 reads them. It
// returns only when the exec fails.
func becomeStage2(dir, raw string) error {
	fd, err := unix.MemfdCreate("agentrun-worker-config", 0) // not close-on-exec
	if err != nil {
		return fmt.Errorf("worker: pass config: %w", err)
	}
	f := os.NewFile(uintptr(fd), "config")
	defer func() { _ = f.Close() }()
	if _, err := f.Write(protocol.AppendFrame(nil, frameConfig, raw)); err != nil {
		return fmt.Errorf("worker: pass config: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return fmt.Errorf("worker: pass config: %w", err)
	}
	for _, d := range []int{fdRequests, fdReplies} {
		if _, err := unix.FcntlInt(uintptr(d), unix.F_SETFD, 0); err != nil {
			return fmt.Errorf("worker: keep fd %d: %w", d, err)
		}
	}
	if err := os.Chdir(dir); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	return execDyingWithParent("/proc/self/exe", []string{"agentrun-worker", Command, "serve", strconv.Itoa(fd)}, workerEnv)
}

// execDyingWithParent execs path on the calling thread, keeping the process's
// parent-death signal: the kernel keeps it per thread, and an exec keeps only the
// thread that calls it, whose setting is its own, not the one the process's start gave
// its first thread. So the calling thread sets SIGKILL first; should the parent die
// before that, the first thread's setting still ends the process.
func execDyingWithParent(path string, argv, env []string) error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("start worker: die with the parent: %w", err)
	}
	return fmt.Errorf("start worker: %w", syscall.Exec(path, argv, env))
}

// nameStage2 gives this process the name agentrun-worker in the process table, which
// an exec of /proc/self/exe would leave as "exe", when the calling goroutine still runs
// on the main thread, whose name ps shows (it is so at the start of main).
func nameStage2() {
	if unix.Gettid() == os.Getpid() {
		_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&workerComm[0])), 0, 0, 0)
	}
}

// workerComm is BinaryName as PR_SET_NAME takes it: NUL-terminated, 15 bytes at most.
var workerComm = append([]byte(BinaryName[:min(len(BinaryName), 15)]), 0)

package worker

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sandbox"
)

// fdSpawner is the spawner's end of its socket pair.
const fdSpawner = 3

// spawnMain is a Spawner's process: for each request on its socket it starts a worker
// with the request's level's process attributes and files and replies with its pid
// and pidfd; it reaps every worker that ends; when the runner closes its end it exits,
// and the workers still running die with it (their parent-death signal).
func spawnMain() int {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker spawner: %v\n", err)
		return 1
	}
	defer func() { _ = null.Close() }()
	var reaper sync.WaitGroup
	stop := make(chan struct{})
	reaper.Go(func() { onChildExit(stop, reapAll) })
	defer reaper.Wait()
	defer close(stop)

	buf, oob := make([]byte, maxSpawnFrame), make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fdSpawner, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "worker spawner: %v\n", err)
			return 1
		}
		if n == 0 {
			return 0 // the runner closed its end
		}
		reply, pidfd := spawnOne(buf[:n], oob[:oobn], null)
		var rights []byte
		if pidfd >= 0 {
			rights = unix.UnixRights(pidfd)
		}
		err = unix.Sendmsg(fdSpawner, reply, rights, nil, 0)
		if pidfd >= 0 {
			_ = unix.Close(pidfd)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "worker spawner: reply: %v\n", err)
			return 1
		}
	}
}

// spawnOne starts the worker a request asks for and returns the reply, and the
// worker's pidfd (-1 when none started). The request's files are closed.
func spawnOne(msg, oob []byte, null *os.File) (reply []byte, pidfd int) {
	fds, err := receivedFDs(oob)
	defer func() {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
	}()
	fail := func(err error) ([]byte, int) { return protocol.AppendFrame(nil, frameFail, err.Error()), -1 }
	if err != nil {
		return fail(err)
	}
	f, err := decodeSpawnFrame(msg)
	if err != nil {
		return fail(err)
	}
	if len(f) != 3 || f[0] != frameSpawn || len(fds) < 3 || len(fds) > 4 {
		return fail(fmt.Errorf("unexpected request %q with %d files", msg, len(fds)))
	}
	level, binary := sandbox.Level(f[1]), f[2]
	attr := sandbox.SysProcAttr(level)
	pidfd = -1
	attr.PidFD = &pidfd
	pid, err := syscall.ForkExec(binary, []string{binary, Command}, &syscall.ProcAttr{
		Dir:   "/",
		Env:   workerEnv,
		Files: append([]uintptr{null.Fd(), null.Fd()}, uintptrs(fds)...),
		Sys:   attr,
	})
	if err != nil {
		return fail(err)
	}
	if pidfd < 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return fail(errors.New("the kernel gave no pidfd (Linux 5.3 or later is needed)"))
	}
	return protocol.AppendFrame(nil, frameSpawned, strconv.Itoa(pid)), pidfd
}

// reapAll waits for every child that has ended.
func reapAll() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if pid <= 0 {
			return // none has ended, or there are no children
		}
	}
}

// uintptrs are fds as ProcAttr.Files takes them.
func uintptrs(fds []int) []uintptr {
	out := make([]uintptr, len(fds))
	for i, fd := range fds {
		out[i] = uintptr(fd)
	}
	return out
}

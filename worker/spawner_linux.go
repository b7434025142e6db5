package worker

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sandbox"
)

// maxSpawnFrame bounds a message between a Spawner and its process.
const maxSpawnFrame = 64 << 10

// spawn starts binary as a worker at level, with the first of files as its stderr and
// the others as its fds from 3 on, and returns its pid and pidfd. The caller keeps its
// copies of the files.
func (s *Spawner) spawn(binary string, level sandbox.Level, files ...*os.File) (pid, pidfd int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, 0, errSpawnerClosed
	}
	for retried := false; ; retried = true {
		if s.cmd == nil {
			if err := s.start(binary); err != nil {
				return 0, 0, err
			}
		}
		var broken bool
		pid, pidfd, broken, err = s.roundTrip(binary, level, files...)
		if !broken {
			return pid, pidfd, err
		}
		// A spawner that cannot be reached is ended, and its workers die with it, the
		// one it may have started for this request included: start another and ask
		// it, once.
		_ = s.cmd.Process.Kill()
		if serr := s.stop(); serr != nil {
			err = fmt.Errorf("%w (%w)", err, serr)
		}
		if retried {
			return 0, 0, err
		}
	}
}

// start starts the spawner's process from binary, with its end of a socket pair as
// fd 3, in a process group of its own so that a terminal's signals reach only the
// runner, and killed should the runner die.
func (s *Spawner) start(binary string) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("worker spawner: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "spawner"), os.NewFile(uintptr(fds[1]), "spawner")
	defer func() { _ = theirs.Close() }() // the process holds its own copy once started
	c, err := net.FileConn(mine)
	_ = mine.Close() // FileConn holds a duplicate
	if err != nil {
		return fmt.Errorf("worker spawner: %w", err)
	}
	s.stderr = &tailBuffer{max: 8 << 10}
	cmd := exec.Command(binary, Command, "spawn")
	cmd.Env = workerEnv
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = s.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = stderrGrace
	if err := cmd.Start(); err != nil {
		_ = c.Close()
		return fmt.Errorf("worker spawner: start %s: %w", binary, err)
	}
	s.cmd, s.conn = cmd, c.(*net.UnixConn)
	return nil
}

// roundTrip asks the spawner's process for one worker; broken says that the process
// could not be reached, or answered nothing that makes sense.
func (s *Spawner) roundTrip(binary string, level sandbox.Level, files ...*os.File) (pid, pidfd int, broken bool, err error) {
	rights := make([]int, len(files))
	for i, f := range files {
		rights[i] = int(f.Fd())
	}
	_ = s.conn.SetDeadline(time.Now().Add(startTimeout))
	if _, _, err := s.conn.WriteMsgUnix(protocol.AppendFrame(nil, frameSpawn, string(level), binary), unix.UnixRights(rights...), nil); err != nil {
		return 0, 0, true, fmt.Errorf("worker spawner: %w", err)
	}
	if s.buf == nil {
		s.buf, s.oob = make([]byte, maxSpawnFrame), make([]byte, unix.CmsgSpace(4))
	}
	buf, oob := s.buf, s.oob
	n, oobn, flags, _, err := s.conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return 0, 0, true, fmt.Errorf("worker spawner: %w%s", err, tailOf(s.stderr))
	}
	if n == 0 {
		return 0, 0, true, fmt.Errorf("worker spawner: it ended%s", tailOf(s.stderr))
	}
	if flags&unix.MSG_CTRUNC != 0 {
		// The kernel had no room in this process's file table for the pidfd, and
		// dropped it: the spawner is sound, and the worker, without this process's
		// pidfd, ends when the caller closes its pipes.
		if fds, err := receivedFDs(oob[:oobn]); err == nil {
			for _, fd := range fds {
				_ = unix.Close(fd)
			}
		}
		return 0, 0, false, fmt.Errorf("worker spawner: no room for the worker's pidfd: %w", unix.EMFILE)
	}
	got, err := receivedFDs(oob[:oobn])
	if err != nil {
		return 0, 0, true, fmt.Errorf("worker spawner: %w", err)
	}
	f, err := decodeSpawnFrame(buf[:n])
	switch {
	case err == nil && len(f) == 2 && f[0] == frameSpawned && len(got) == 1:
		if pid, err = strconv.Atoi(f[1]); err == nil && pid > 0 {
			return pid, got[0], false, nil
		}
	case err == nil && len(f) == 2 && f[0] == frameFail && len(got) == 0:
		return 0, 0, false, fmt.Errorf("worker: start %s sandbox: %s", level, f[1])
	}
	for _, fd := range got {
		_ = unix.Close(fd)
	}
	return 0, 0, true, fmt.Errorf("worker spawner: unexpected reply %q", buf[:n])
}

// decodeSpawnFrame reads the one frame of a message.
func decodeSpawnFrame(b []byte) ([]string, error) {
	dec := protocol.NewFrameDecoder(bytes.NewReader(b), maxSpawnFrame)
	if !dec.Next() {
		return nil, fmt.Errorf("no frame: %w", dec.Err())
	}
	return dec.Fields(), nil
}

// receivedFDs returns the file descriptors a message's control data carries.
func receivedFDs(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			return nil, err
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

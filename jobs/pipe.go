package jobs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// PipeWait is how long Load waits for a spec that is a pipe (a named FIFO, or the
// /dev/fd/N of `validate <(cat spec.yaml)`) to deliver its first bytes.
var PipeWait = 10 * time.Second

// ErrPipeTimeout is returned by Load for a pipe that no process writes to.
var ErrPipeTimeout = errors.New("no process writes to this pipe")

// readSpec reads at most MaxSpecBytes+1 bytes of the file at path. A regular file is
// read as it is. A pipe is opened without blocking (opening a FIFO for reading blocks
// until some process opens it for writing, forever when none does) and read with a
// deadline of PipeWait for its first bytes.
func readSpec(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode()&os.ModeNamedPipe == 0 {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer func() { _ = f.Close() }()
		return io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	}
	return readPipe(path)
}

// readPipe reads a pipe. While no byte has come, Load holds a write end of its own:
// with a writer present, an empty pipe reads as "try again" (which the deadline
// bounds) rather than as the end, so a writer that comes late is waited for. The first
// bytes prove a real writer; the end is then when the last writer closes.
func readPipe(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	hold, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() {
		if hold != nil {
			_ = hold.Close()
		}
	}()
	if err := f.SetReadDeadline(time.Now().Add(PipeWait)); err != nil {
		return nil, err
	}
	var data []byte
	buf := make([]byte, 64<<10)
	for len(data) <= MaxSpecBytes {
		n, err := f.Read(buf)
		data = append(data, buf[:n]...)
		if n > 0 && hold != nil {
			_ = hold.Close()
			hold = nil
			if err := f.SetReadDeadline(time.Time{}); err != nil {
				return nil, err
			}
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, fmt.Errorf("%s: %w (waited %v for the spec)", path, ErrPipeTimeout, PipeWait)
		case errors.Is(err, io.EOF):
			return data, nil
		case err != nil:
			return nil, err
		}
	}
	return data, nil
}

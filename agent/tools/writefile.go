package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agentrun/agentrun/pathname"
	"github.com/agentrun/agentrun/policy"
	"golang.org/x/sys/unix"
)

// maxWriteAttempts bounds the retries of a write whose file appears or vanishes while
// it is being opened.
const maxWriteAttempts = 3

// writeFile writes data to the file at the absolute path abs, creating it and its
// missing parent directories, and keeping the mode of an existing file. The file is
// opened once and checked where it really is (openFile) before anything is written or
// cut: an existing file is overwritten in place and then cut to the new length,
// rather than truncated to zero first (on ext4 a truncation to zero also forces the
// file's data to disk on close, which costs hundreds of microseconds per edit).
func writeFile(env *Env, abs string, data []byte) error {
	for range maxWriteAttempts {
		f, _, err := openFile(env, abs, os.O_WRONLY, policy.OpWrite)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			f, err = createFile(env, abs, 0o644)
			if errors.Is(err, fs.ErrExist) {
				continue // made meanwhile: open it as an existing file
			}
		}
		if err != nil {
			return err
		}
		err = overwrite(f, data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return errSwapped
}

// overwrite replaces the content of the file f with data.
func overwrite(f *os.File, data []byte) error {
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(data)))
}

// createFile creates the new regular file at the absolute path abs for writing; when
// abs is a dangling link, the file it names. The parent directory is opened and
// checked where it really is, and the file is made in that very directory; a name
// that exists by then, even as a link, gives fs.ErrExist.
func createFile(env *Env, abs string, perm fs.FileMode) (*os.File, error) {
	target := pathname.Real(abs)
	name := filepath.Base(target)
	dir, err := openParent(env, abs, filepath.Dir(target), name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dir.Close() }()
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: target, Err: err}
	}
	return os.NewFile(uintptr(fd), target), nil
}

// openParent opens the directory dir that a new file name is to be made in, creating
// the missing directories; abs is the path the file was asked for. The deepest
// existing directory is opened and the policy checks the path of the file to be made
// from where that directory really is; each missing directory is then made in and
// opened from the one before it, never following a link.
func openParent(env *Env, abs, dir, name string) (*os.File, error) {
	var missing []string
	f, err := openNoMagic(dir, dirFlags, 0)
	for errors.Is(err, fs.ErrNotExist) && dir != filepath.Dir(dir) {
		missing = append([]string{filepath.Base(dir)}, missing...)
		dir = filepath.Dir(dir)
		f, err = openNoMagic(dir, dirFlags, 0)
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return nil, &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	}
	if err != nil {
		return nil, err
	}
	real, err := openedPath(f, dir)
	if err == nil {
		target := filepath.Join(append(append([]string{real}, missing...), name)...)
		err = env.policy().CheckOpened(policy.OpWrite, abs, target, env.dirs())
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	for _, m := range missing {
		dir = filepath.Join(dir, m)
		err := unix.Mkdirat(int(f.Fd()), m, 0o755)
		fd := -1
		if err == nil || errors.Is(err, unix.EEXIST) {
			fd, err = unix.Openat(int(f.Fd()), m, dirFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		_ = f.Close()
		if err != nil {
			return nil, &fs.PathError{Op: "mkdir", Path: dir, Err: err}
		}
		f = os.NewFile(uintptr(fd), dir)
	}
	return f, nil
}

package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/agentrun/agentrun/pathname"
	"github.com/agentrun/agentrun/policy"
	"golang.org/x/sys/unix"
)

// Every file the file tools open goes through openNoMagic, and is then checked where
// it really is: the policy checks a path before the call, but the path is resolved
// again when it is opened, and a symbolic link changed in between must not send a
// Write out of the workspace or a Read to a credential store. So the opened file's
// real location is taken from the open descriptor and checked once more, before a
// byte is read or written.

// Open flags of the file tools. O_NONBLOCK keeps a named pipe from blocking the open
// (it has no effect on regular files), O_NOCTTY keeps a terminal from becoming ours.
const (
	readFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY
	dirFlags  = unix.O_RDONLY | unix.O_DIRECTORY
)

// errMagicLink is the error of a path that resolves through a /proc magic link, such
// as /dev/stdout, /dev/fd/3 or /proc/self/root: it would reach an open file (or the
// root or working directory) of agentrun itself.
var errMagicLink = errors.New("it resolves through a /proc magic link to an open file of agentrun")

// errSwapped is the error of a file that is not where its path led a moment before:
// a symbolic link on the way was changed while it was being opened.
var errSwapped = errors.New("the path changed while it was being opened (a symbolic link was replaced)")

// hardLinkError refuses to change a file that has other names, which may lie outside
// the workspace.
type hardLinkError struct{ names uint64 }

func (e *hardLinkError) Error() string {
	return fmt.Sprintf("a hard link with %d names; its other names may lie outside the workspace: copy it first", e.names)
}

// openFile opens the regular file at the absolute path abs with flags (os.O_RDONLY,
// os.O_WRONLY or os.O_RDWR, never creating or truncating it), and checks what was
// opened: directories give syscall.EISDIR, devices, sockets and named pipes
// errNotRegular, a file opened for writing that has other names a *hardLinkError,
// and a real location the policy does not allow for every op a *policy.DeniedError.
func openFile(env *Env, abs string, flags int, ops ...policy.Op) (*os.File, fs.FileInfo, error) {
	f, err := openNoMagic(abs, flags|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) { // a named pipe without a reader, a socket
			return nil, nil, errNotRegular
		}
		return nil, nil, err
	}
	fi, err := checkRegular(f, flags&(os.O_WRONLY|os.O_RDWR) != 0)
	if err == nil {
		_, err = checkOpened(env, f, abs, ops...)
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// checkRegular checks that the open file is a regular file, with a single name when
// it is to be written.
func checkRegular(f *os.File, write bool) (fs.FileInfo, error) {
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case fi.IsDir():
		return nil, syscall.EISDIR
	case !fi.Mode().IsRegular():
		return nil, errNotRegular
	}
	if n := linkCount(fi); write && n > 1 {
		return nil, &hardLinkError{names: n}
	}
	return fi, nil
}

// linkCount is the number of names (hard links) of a file, or 1 when unknown.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// checkOpened returns the real location of f, opened from the absolute path abs, once
// the policy allows every op there.
func checkOpened(env *Env, f *os.File, abs string, ops ...policy.Op) (string, error) {
	real, err := openedPath(f, abs)
	if err != nil {
		return "", err
	}
	for _, op := range ops {
		if err := env.policy().CheckOpened(op, abs, real, env.dirs()); err != nil {
			return "", err
		}
	}
	return real, nil
}

// statPath is openedPath without the kernel's help: abs with its links resolved, when
// that names the very file f is (same device and inode). A link changed after the
// open gives errSwapped.
func statPath(f *os.File, abs string) (string, error) {
	real := pathname.Real(abs)
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	li, err := os.Lstat(real)
	if err != nil || !os.SameFile(fi, li) {
		return "", errSwapped
	}
	return real, nil
}

// openChecked is openNoMagic without the kernel's help: it refuses a path that
// resolves through a magic link, then opens it. Linux uses it before 5.6, other
// systems always.
func openChecked(path string, flags int, perm os.FileMode) (*os.File, error) {
	if viaMagicLink(path) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errMagicLink}
	}
	return os.OpenFile(path, flags|unix.O_CLOEXEC, perm)
}

// viaMagicLink reports whether resolving the absolute path p passes through a magic
// location: /dev/fd, or a /proc entry for a process's open files, root, working
// directory or executable. Links are followed like pathname.Real does.
func viaMagicLink(p string) bool {
	_, magic := pathname.Walk(p, "", isMagicLocation)
	return magic
}

// isMagicLocation reports whether a clean absolute path is /dev/fd or below it, or
// /proc/P/fd/N, /proc/P/map_files/N, /proc/P/root, /proc/P/cwd or /proc/P/exe (also
// under /proc/P/task/T), whose links lead to a process's open files.
func isMagicLocation(p string) bool {
	if pathname.Within("/dev/fd", p) {
		return true
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(parts) < 3 || parts[0] != "proc" {
		return false
	}
	rest := parts[2:]
	if len(rest) >= 3 && rest[0] == "task" {
		rest = rest[2:]
	}
	switch rest[0] {
	case "fd", "map_files":
		return len(rest) >= 2
	case "root", "cwd", "exe":
		return true
	}
	return false
}

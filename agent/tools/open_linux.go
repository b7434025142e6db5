package tools

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// openNoMagic opens the absolute path p like os.OpenFile, but refuses to resolve a
// /proc magic link on the way (/dev/stdout, /dev/fd/N, /proc/self/fd/N, /proc/P/root,
// /proc/P/cwd …), which would reach agentrun's own open files: the protocol pipe, its
// output. Ordinary symbolic links are followed unless flags has O_NOFOLLOW. Kernels
// before 5.6, which lack openat2, get openChecked instead.
func openNoMagic(p string, flags int, perm os.FileMode) (*os.File, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_NO_MAGICLINKS}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(perm.Perm())
	}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, p, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), p), nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS):
			return openChecked(p, flags, perm)
		case errors.Is(err, unix.ELOOP) && viaMagicLink(p):
			err = errMagicLink
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
}

// openedPath returns where the open file f, opened from the absolute path abs, really
// is, as the kernel records it. Without /proc it falls back to statPath. A file that
// is no file system path (a pipe, a socket) gives errMagicLink, one deleted since it
// was opened errSwapped.
func openedPath(f *os.File, abs string) (string, error) {
	real, err := os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(f.Fd()), 10))
	switch {
	case err != nil:
		return statPath(f, abs)
	case !strings.HasPrefix(real, "/"):
		return "", errMagicLink
	case strings.HasSuffix(real, " (deleted)"):
		if fi, err := f.Stat(); err != nil || linkCount(fi) == 0 {
			return "", errSwapped
		}
	}
	return real, nil
}

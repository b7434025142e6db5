//go:build !linux

package tools

import "os"

// openNoMagic opens the absolute path p like os.OpenFile, but refuses a path that
// resolves through /dev/fd (or a /proc magic link, where a /proc exists), which would
// reach agentrun's own open files. Ordinary symbolic links are followed unless flags
// has O_NOFOLLOW.
func openNoMagic(p string, flags int, perm os.FileMode) (*os.File, error) {
	return openChecked(p, flags, perm)
}

// openedPath returns where the open file f, opened from the absolute path abs, really
// is: abs with its links resolved, when that is the same file.
func openedPath(f *os.File, abs string) (string, error) { return statPath(f, abs) }

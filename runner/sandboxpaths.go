package runner

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentrun/agentrun/pathname"
)

// readableOutside are the paths of readable that no writable path holds: at level strict
// a readable path is a read-only mount, which would take the write from a path the spec
// made writable (a worktree's object folders, which are those of a repository the
// spec lets the tools write).
func readableOutside(readable, writable []string) []string {
	return slices.DeleteFunc(slices.Clone(readable), func(r string) bool {
		return slices.ContainsFunc(writable, func(w string) bool { return pathname.Within(w, r) })
	})
}

// makeLayers makes the folder of a session's layers over its caches (level strict) in
// root, or in the system's temporary folder where root is "": the session's own, out
// of its tools' sight, and removed when it ends (removeLayers).
func makeLayers(root string) (string, error) {
	if root == "" {
		root = os.TempDir()
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	return os.MkdirTemp(root, "cache-")
}

// removeLayers removes the folder dir of a session's layers over its caches. The
// kernel leaves an overlay's work folder without permissions, which a runner that is
// not root must give back before it can remove what is inside.
func removeLayers(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

package runner

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrun/agentrun/jobs"
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

// cachesDir is the folder of the output folder's workspaces/ that holds the sessions'
// layers over their caches (level strict); no session key starts with a dot.
const cachesDir = ".caches"

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

// buildCaches are the folders of the home that hold what the next build or install runs,
// by their paths in it: Go's build and module caches, npm's, pip's, Cargo's registry,
// Maven's and Gradle's.
var buildCaches = []string{".cache/go-build", "go/pkg/mod", ".npm", ".cache/pip", ".cargo/registry",
	".m2/repository", ".gradle/caches", ".cache/yarn", ".local/share/pnpm"}

// writableCaches says, once for each of the sessions' sandbox.writable paths, which
// build caches it makes writable (it, or one inside it): what a session writes there,
// the next session's build and the user's own run unconfined. sandbox.caches keeps them.
func writableCaches(sessions []jobs.Session, home string) []string {
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	var out []string
	for _, s := range sessions {
		for _, w := range expandHome(s.Settings.Sandbox.Writable, home) {
			var held []string
			for _, c := range buildCaches {
				if p := filepath.Join(home, c); pathname.Within(w, p) || pathname.Within(p, w) {
					held = append(held, "~/"+c)
				}
			}
			if len(held) == 0 {
				continue
			}
			msg := fmt.Sprintf("sandbox.writable %s makes the build caches %s writable: what a session writes there, "+
				"the next session's build and your own link or run unconfined; sandbox.caches gives each session a layer of its own over them (level strict).",
				w, strings.Join(held, ", "))
			if !slices.Contains(out, msg) {
				out = append(out, msg)
			}
		}
	}
	return out
}

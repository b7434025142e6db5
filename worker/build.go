package worker

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// BinaryName is the file name of the worker's own executable, which agentrun uses
// when it lies next to its own: it has only the worker's code, so it starts in less
// CPU and memory than agentrun itself, which also serves.
const BinaryName = "agentrun-worker"

// Executable is the executable a worker runs as when none is named: agentrun-worker
// in the folder of this process's executable when it is there (installed with
// agentrun), else this executable, which serves as its own worker.
func Executable() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	p := filepath.Join(filepath.Dir(self), BinaryName)
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return p, nil
	}
	return self, nil
}

// ownBuild is buildID, read once: both ends compare it, the runner for every session.
var ownBuild = sync.OnceValue(buildID)

// buildID names the build of this executable as far as the worker boundary cares:
// agentrun and agentrun-worker built by one command (one source tree, one version
// stamp, one toolchain) have the same one; a worker left from another build has
// another, and is refused before it runs anything, since a Config field it does not
// know would otherwise be dropped without a word.
func buildID() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return runtime.Version()
	}
	var b strings.Builder
	b.WriteString(bi.GoVersion + " " + bi.Main.Path + "@" + bi.Main.Version)
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified", "-ldflags":
			b.WriteString(" " + s.Key + "=" + s.Value)
		}
	}
	return b.String()
}

package worker

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// BinaryName is the file name of the worker's own executable, which agentrun uses
// when it lies next to its own: it has only the worker's code, so it starts in less
// CPU and memory than agentrun itself, which also serves.
const BinaryName = "agentrun-worker"

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

package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RootOnly lists what the host lets nobody but root read: the files and folders (a
// folder whole) whose mode lacks the others' read bit, of /etc (a cluster's admin
// kubeconfig, a CI runner's registration token, VPN keys, old password hashes), of the
// external scope's top-level folders (/root, a private /opt/vendor) and of the homes in
// /home to the depth of their top level (another user's private home, or ~/.ssh in a
// home anybody may list). Only where this process runs as root, since the tools of a
// runner that runs as root run as uid 0 at every level, and the host's file modes keep
// nothing from them (for any other user they do). The sandbox hides them with the
// machine's other credentials (Spec.RootOnly), but for those that hold the
// session's own folders (its home, its workspace: Spec.Hidden). It walks /etc, so a
// run asks once.
func RootOnly() []string {
	if os.Geteuid() != 0 {
		return nil
	}
	out := rootOnlyIn("/etc", -1)
	for _, d := range ExternalDirs() {
		depth := 1
		if d == "/home" {
			depth = 2
		}
		out = append(out, rootOnlyIn(d, depth)...)
	}
	return out
}

// rootOnlyIn lists what lacks the others' read bit in folder dir, to depth levels
// below it, dir itself included. With a depth below zero it walks the whole tree but
// into what it lists; with a depth, it walks on into them too, since one of them may
// hold the session's own folders and stay visible, with what it holds listed.
func rootOnlyIn(dir string, depth int) []string {
	var out []string
	base := strings.Count(filepath.Clean(dir), "/")
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return nil // what cannot be read is not listed; a link is its target's
		}
		if p == dir && depth < 0 {
			return nil // /etc itself is everyone's
		}
		deep := strings.Count(p, "/") - base
		info, err := d.Info()
		if err == nil && info.Mode().Perm()&0o004 == 0 {
			out = append(out, p)
			if d.IsDir() && depth < 0 {
				return filepath.SkipDir
			}
		}
		if d.IsDir() && depth >= 0 && deep >= depth {
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

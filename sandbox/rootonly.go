package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
)

// RootOnly lists the entries of /etc that the host lets nobody but root read: files and
// folders whose mode lacks the others' read bit (a folder whole), such as a cluster's
// admin kubeconfig, a CI runner's registration token, VPN keys or old password hashes.
// Only where this process runs as root, since the tools of a runner that runs as root
// run as uid 0 at every level, and the host's file modes keep nothing from them (for
// any other user they do). The sandbox hides them with the machine's other credentials
// (Spec.Credentials). It walks /etc, so a run asks once.
func RootOnly() []string {
	if os.Geteuid() != 0 {
		return nil
	}
	var out []string
	_ = filepath.WalkDir("/etc", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return nil // what cannot be read is not listed; a link is its target's
		}
		info, err := d.Info()
		if err != nil || info.Mode().Perm()&0o004 != 0 {
			return nil
		}
		out = append(out, p)
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

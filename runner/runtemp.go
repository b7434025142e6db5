package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// runTempPrefix starts the name of a run's folder of its sessions' TMPDIRs (level
// landlock).
const runTempPrefix = "agentrun-run-"

// runTemp is a run's folder of its sessions' TMPDIRs. The run holds an flock on the
// folder for as long as it lives, which the kernel drops when it dies: a folder whose
// lock can be taken is a killed run's, which the next run removes, so that neither its
// disk nor its sessions' files stay (where TMPDIR is readable to the tools, a later
// run's would find them).
type runTemp struct {
	dir string
	f   *os.File // the folder, open, holding the lock
}

// newRunTemp removes the folders that killed runs left in parent (os.TempDir() when
// empty) and makes this run's, locked before it takes the name another run looks for.
func newRunTemp(parent string) (*runTemp, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	removeStaleRunTemps(parent)
	made, err := os.MkdirTemp(parent, "."+runTempPrefix+"new-")
	if err != nil {
		return nil, err
	}
	f, err := os.Open(made)
	if err == nil {
		err = tryLock(f)
	}
	dir := filepath.Join(parent, strings.TrimPrefix(filepath.Base(made), "."))
	if err == nil {
		err = os.Rename(made, dir)
	}
	if err != nil {
		if f != nil {
			_ = f.Close()
		}
		_ = os.RemoveAll(made)
		return nil, fmt.Errorf("the sessions' temporary folder: %w", err)
	}
	return &runTemp{dir: dir, f: f}, nil
}

// removeStaleRunTemps removes the run folders in parent whose lock no run holds.
func removeStaleRunTemps(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), runTempPrefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		f, err := os.Open(dir)
		if err != nil {
			continue // another user's, say
		}
		if tryLock(f) == nil {
			_ = os.RemoveAll(dir) // what cannot go stays, as it was
		}
		_ = f.Close()
	}
}

// remove removes the folder and drops the lock.
func (t *runTemp) remove() error {
	err := os.RemoveAll(t.dir)
	return errors.Join(err, t.f.Close())
}

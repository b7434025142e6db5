package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentrun/agentrun/jobs"
)

// copyWorkspace makes the copy dst of the workspace folder src (real, with its links
// resolved), leaving out the output folder out. A repository's objects, and its Git LFS
// objects, are not copied:
// the copy's git folder reads the original's through its alternates, which the tools may
// read and not write, and what the copy's git adds stays the copy's. A repository's
// objects are the bulk of a copy (a file each, where they are loose), and a batch of
// copies of one repository would hold them once each.
func (st *runState) copyWorkspace(ctx context.Context, src, real, dst, out string, creds *checkoutCreds) (*workspace, error) {
	objects := filepath.Join(real, ".git", "objects")
	shared := isDir(filepath.Join(real, ".git")) && isDir(objects) && realPath(objects)
	skip := []string{out}
	if shared {
		// And its Git LFS objects, which git-lfs finds beside the alternates' objects.
		for _, rel := range []string{"objects", "lfs/objects"} {
			skip = append(skip, filepath.Join(absOr(src), ".git", rel), filepath.Join(real, ".git", rel))
		}
	}
	if err := copyTree(src, dst, skip...); err != nil {
		return nil, fmt.Errorf("workspace: copy %s: %w", src, err)
	}
	if shared {
		if err := shareObjects(objects, filepath.Join(dst, ".git", "objects")); err != nil {
			return nil, fmt.Errorf("workspace: copy %s: %w", src, err)
		}
	}
	if err := creds.applyTo(real, dst); err != nil {
		return nil, fmt.Errorf("workspace: copy %s: %w", src, err)
	}
	dir, err := filepath.EvalSymlinks(dst)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	ws := &workspace{dir: dir, root: dir, mode: jobs.WorkspaceCopy}
	if info, err := os.Lstat(filepath.Join(dir, ".git")); err == nil && info.Mode().IsRegular() {
		// A linked worktree's or a submodule's copy: its .git file names the
		// original's git folder, which the tools cannot see, or would share with the
		// original. Read for each copy, as its files are: a commit in the original
		// since the run started is the copy's HEAD too.
		repo, err := st.git.readGitSource(ctx, real, creds)
		if err == nil {
			err = repo.own(dir)
		}
		if err != nil {
			return nil, fmt.Errorf("workspace: copy %s: git folder: %w", src, err)
		}
		ws.readable = repo.readable
	} else {
		ws.readable = alternatesOf(dir)
	}
	ws.credentials, ws.credsRefused = creds.forTools(true)
	guard, err := newGitGuard(dir, creds.trees) // the copy's are the checkout's
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	ws.guards = append(ws.guards, guard)
	return ws, nil
}

// shareObjects makes objects, the object folder of a copy's git folder, one that holds
// nothing of its own yet and reads the original's, from.
func shareObjects(from, objects string) error {
	for _, d := range []string{"info", "pack"} {
		if err := os.MkdirAll(filepath.Join(objects, d), 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(objects, "info", "alternates"), []byte(from+"\n"), 0o644)
}

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// maxSubmoduleDepth is how deep a worktree workspace checks out submodules of
// submodules.
const maxSubmoduleDepth = 8

// checkedOut is what a worktree workspace's checkout made: the folders the tools must
// read (the object folders and LFS stores of the repository and of its submodules), and
// the submodules' work trees, by their paths in the checkout, whose git folders the git
// guard keeps.
type checkedOut struct {
	readable, trees []string
}

// checkoutTree checks commit of the repository r out at dst with a git folder of its
// own (gitSource.checkout), and in it each submodule that r's work tree has checked out,
// at the commit dst's tree records for it, with a git folder of its own made from the
// submodule's: as git worktree add leaves them, a worktree's submodules would be empty
// folders. A submodule that r's work tree has not checked out stays an empty folder, as
// in a clone.
func (st *runState) checkoutTree(ctx context.Context, r *gitSource, dst, commit string, creds *checkoutCreds, depth int) (checkedOut, error) {
	if commit == "" {
		return checkedOut{}, errors.New("its HEAD has no commit")
	}
	if err := r.checkout(ctx, st.git, dst, commit); err != nil {
		return checkedOut{}, err
	}
	done := checkedOut{readable: r.readable}
	if depth >= maxSubmoduleDepth {
		return done, nil
	}
	links, err := st.git.gitlinks(ctx, filepath.Join(dst, ".git"))
	if err != nil {
		return checkedOut{}, err
	}
	for _, l := range links {
		src := filepath.Join(r.top, l.path)
		if !exists(filepath.Join(src, ".git")) {
			continue // not checked out in the repository's work tree
		}
		sub, err := st.gitSource(ctx, src, creds)
		if err != nil {
			return checkedOut{}, fmt.Errorf("submodule %s: %w", l.path, err)
		}
		in, err := st.checkoutTree(ctx, sub, filepath.Join(dst, l.path), l.commit, creds, depth+1)
		if err != nil {
			return checkedOut{}, fmt.Errorf("submodule %s: %w", l.path, err)
		}
		done.readable = append(done.readable, in.readable...)
		done.trees = append(done.trees, l.path)
		for _, t := range in.trees {
			done.trees = append(done.trees, filepath.Join(l.path, t))
		}
	}
	return done, nil
}

// gitlink is a submodule's entry in an index: its path and the commit it records.
type gitlink struct{ path, commit string }

// gitlinks are the submodules' entries in the index of the git folder gitDir.
func (g gitBin) gitlinks(ctx context.Context, gitDir string) ([]gitlink, error) {
	out, err := g.run(ctx, filepath.Dir(gitDir), "--git-dir="+gitDir, "ls-files", "--stage", "-z")
	if err != nil {
		return nil, err
	}
	return parseGitlinks(out), nil
}

// parseGitlinks reads the gitlinks (mode 160000) of git ls-files --stage -z's output:
// entries "MODE OBJECT STAGE\tPATH", each ended by a NUL.
func parseGitlinks(out []byte) []gitlink {
	var links []gitlink
	for _, entry := range bytes.Split(out, []byte{0}) {
		meta, path, ok := bytes.Cut(entry, []byte{'\t'})
		fields := bytes.Fields(meta)
		if !ok || len(fields) != 3 || string(fields[0]) != "160000" || len(path) == 0 {
			continue
		}
		p := filepath.Clean(string(path))
		if filepath.IsAbs(p) || p == ".." || bytes.HasPrefix([]byte(p), []byte("../")) {
			continue
		}
		links = append(links, gitlink{path: p, commit: string(fields[1])})
	}
	return links
}

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// privateGitDirs is the folder of the output folder's workspaces/ that holds the runner's
// own git folder of each worktree workspace, which the tools cannot see: workspaces/ is
// hidden from them but for their own workspace, and no session key starts with a dot.
const privateGitDirs = ".git-private"

// gitSource is what the git folders of a repository's workspaces are made from, where
// a workspace has a git folder of its own: a worktree workspace, and a copy of a work
// tree whose git folder lies elsewhere (a linked worktree's, a submodule's), which the
// tools could not see or would share with the original. It is read once per run for
// worktrees, which all start from one commit, and once per copy, as a copy's files
// are. The git folder's objects are the repository's, through git's alternates, which
// the tools may only read, and what the tools' git adds (objects, commits, branches, an
// index) goes to the workspace's git folder, so the repository stays as it was. Its
// refs are a copy of the repository's, and its config is the repository's, without
// credentials.
type gitSource struct {
	top    string // the work tree's top folder
	base   string // the commit at the work tree's HEAD
	head   []byte // its HEAD file: its branch, or the commit
	index  string // the path of its index
	config []byte // the repository's config, without credentials or what names its folders
	refs   []byte // the repository's refs, as a packed-refs file
	// objects are the repository's object folder and those its alternates name;
	// readable are those and the Git LFS stores beside them, where git-lfs looks for
	// what the workspace's own store lacks: the tools must be able to read them.
	objects, readable []string
	// shallow and exclude are the repository's shallow file (a shallow clone's, as CI's
	// checkouts are) and info/exclude; worktreeConfig and sparse are the config.worktree
	// and info/sparse-checkout of the work tree of the workspace's folder (a sparse
	// checkout's settings and patterns). Each is nil where there is none.
	shallow, exclude, worktreeConfig, sparse []byte
}

// gitSource reads, once per run, what the git folders of the workspaces of folder dir,
// in a repository's work tree, are made from.
func (st *runState) gitSource(ctx context.Context, dir string, creds *checkoutCreds) (*gitSource, error) {
	// The first session's context, without its end: the source serves every session.
	readCtx := context.WithoutCancel(ctx)
	return st.gitSources.get(dir, func() (*gitSource, error) { return st.git.readGitSource(readCtx, dir, creds) })
}

// readGitSource reads what the git folders of the workspaces of dir are made from;
// creds are the credentials its configs hold, which their config leaves out.
func (g gitBin) readGitSource(ctx context.Context, dir string, creds *checkoutCreds) (*gitSource, error) {
	// The folders are those of dir's own work tree where it has its own (a sparse
	// checkout's patterns and settings).
	out, err := g.run(ctx, dir, "rev-parse", "--git-common-dir", "--git-path", "config.worktree",
		"--git-path", "info/sparse-checkout", "--git-path", "HEAD", "--git-path", "index", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 6 {
		return nil, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	for i, p := range lines {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		lines[i] = filepath.Clean(p)
	}
	common := lines[0]
	r := &gitSource{index: lines[4], top: lines[5], objects: objectFolders(filepath.Join(common, "objects"))}
	r.readable = withLFS(r.objects)
	if r.head, err = os.ReadFile(lines[3]); err != nil {
		return nil, err
	}
	// None before the first commit: a copy needs none, and a worktree workspace of such
	// a repository was refused before the run (worktreeSource).
	if out, err := g.run(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err == nil {
		r.base = strings.TrimSpace(string(out))
	}
	if r.refs, err = g.run(ctx, dir, "for-each-ref", "--format=%(objectname) %(refname)"); err != nil {
		return nil, err
	}
	if r.config, err = g.worktreeConfig(ctx, filepath.Join(common, "config"), creds); err != nil {
		return nil, err
	}
	if r.worktreeConfig, err = g.worktreeConfig(ctx, lines[1], creds); err != nil {
		return nil, err
	}
	for f, p := range map[*[]byte]string{&r.shallow: filepath.Join(common, "shallow"),
		&r.exclude: filepath.Join(common, "info", "exclude"), &r.sparse: lines[2]} {
		if *f, err = readIfExists(p); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// worktreeConfig is the repository's config file path as a worktree's git folder has it
// (nil where there is none): without credentials (creds), core.worktree, which names the
// repository's work tree, or extensions.refStorage, since the worktree keeps its refs in
// files whatever the repository does.
func (g gitBin) worktreeConfig(ctx context.Context, path string, creds *checkoutCreds) ([]byte, error) {
	b, ok := creds.cleanOf(path)
	if !ok {
		var err error
		if b, err = readIfExists(path); b == nil || err != nil {
			return nil, err
		}
	}
	lower := bytes.ToLower(b)
	if !bytes.Contains(lower, []byte("worktree")) && !bytes.Contains(lower, []byte("refstorage")) {
		return b, nil // no git process for the common case
	}
	return editConfig(b, func(path string) error {
		for _, key := range []string{"core.worktree", "extensions.refStorage"} {
			if err := g.unsetKey(ctx, path, key); err != nil {
				return err
			}
		}
		return nil
	})
}

// withLFS are the object folders objects and the Git LFS stores beside them, where
// git-lfs looks for what a repository's own store lacks.
func withLFS(objects []string) []string {
	out := slices.Clone(objects)
	for _, o := range objects {
		if lfs := filepath.Join(filepath.Dir(o), "lfs", "objects"); isDir(lfs) {
			out = append(out, lfs)
		}
	}
	return out
}

// alternatesOf are the object folders that the repository of the work tree dir reads
// through its alternates, and the LFS stores beside them: another repository's, where
// a clone was made with --shared or --reference (as CI keeps a mirror to clone from),
// which the tools' git must read though it lies outside the workspace.
func alternatesOf(dir string) []string {
	gitDir, err := gitDirOf(dir)
	if err != nil {
		return nil
	}
	return withLFS(objectFolders(filepath.Join(commonDir(gitDir), "objects"))[1:])
}

// exists reports whether path is there (a link counts, wherever it leads).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// isDir reports whether path is a folder.
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// readIfExists is the content of the file at path, nil where there is none.
func readIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// maxAlternates is how deep git follows the alternates of alternates.
const maxAlternates = 5

// objectFolders are the object folder objects and those its alternates name, and
// theirs, as git follows them (a clone made with --shared or --reference reads the
// objects of another repository).
func objectFolders(objects string) []string {
	out := []string{filepath.Clean(objects)}
	depth := map[string]int{out[0]: 0}
	for i := 0; i < len(out); i++ {
		if depth[out[i]] >= maxAlternates {
			continue
		}
		b, err := os.ReadFile(filepath.Join(out[i], "info", "alternates"))
		if err != nil {
			continue
		}
		for _, alt := range parseAlternates(b, out[i]) {
			if _, seen := depth[alt]; !seen {
				depth[alt] = depth[out[i]] + 1
				out = append(out, alt)
			}
		}
	}
	return out
}

// parseAlternates are the object folders that the alternates file b of the object
// folder dir names, as absolute paths: one a line, relative to dir unless absolute, in
// C-style quotes where git quoted it; blank lines and those starting with # name none.
func parseAlternates(b []byte, dir string) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '"' {
			var err error
			if line, err = strconv.Unquote(line); err != nil || line == "" {
				continue
			}
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(dir, line)
		}
		out = append(out, filepath.Clean(line))
	}
	return out
}

// checkout checks commit out at dst, detached, with its own git folder in dst/.git.
func (r *gitSource) checkout(ctx context.Context, g gitBin, dst, commit string) error {
	gitDir := filepath.Join(dst, ".git")
	if err := r.write(gitDir, []byte(commit+"\n"), nil); err != nil {
		return err
	}
	args := append([]string{"--git-dir=" + gitDir, "--work-tree=" + dst}, sessionGit...)
	if _, err := g.run(ctx, dst, append(args, "read-tree", "--reset", "-u", "HEAD")...); err != nil {
		return err
	}
	return unlinkShared(gitDir)
}

// unlinkShared removes from the git folder gitDir, which the tools may write, each file
// that is a hard link: the checkout's git-lfs links into the folder's LFS store the
// objects it finds in the repository's, and through the link the tools would write
// those. What goes, git-lfs finds again through the alternates, and copies.
func unlinkShared(gitDir string) error {
	return filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && uint64(st.Nlink) > 1 {
			return os.Remove(p)
		}
		return nil
	})
}

// own gives the copy dst of the work tree a git folder of its own in place of its .git
// file, with the work tree's HEAD and index: the copy's git sees its files as the
// original's sees them.
func (r *gitSource) own(dst string) error {
	index, err := readIfExists(r.index)
	if err != nil {
		return err
	}
	gitDir := filepath.Join(dst, ".git")
	if err := os.Remove(gitDir); err != nil {
		return err
	}
	return r.write(gitDir, r.head, index)
}

// write makes the git folder gitDir, with HEAD head and index (none where nil).
func (r *gitSource) write(gitDir string, head, index []byte) error {
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags", "info"} {
		if err := os.MkdirAll(filepath.Join(gitDir, d), 0o755); err != nil {
			return err
		}
	}
	files := []struct {
		name string
		b    []byte
	}{
		{"HEAD", head},
		{"index", index},
		{"config", r.config},
		{"packed-refs", r.refs},
		{"objects/info/alternates", []byte(r.objects[0] + "\n")},
		{"shallow", r.shallow},
		{"info/exclude", r.exclude},
		{"config.worktree", r.worktreeConfig},
		{"info/sparse-checkout", r.sparse},
	}
	for _, f := range files {
		if f.b == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(gitDir, f.name), f.b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

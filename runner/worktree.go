package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// privateGitDirs is the folder of the output folder's workspaces/ that holds the runner's
// own git folder of each worktree workspace, which the tools cannot see: workspaces/ is
// hidden from them but for their own workspace, and no session key starts with a dot.
const privateGitDirs = ".git-private"

// worktreeRepo is what the worktree workspaces of one repository are made from, read
// once per run. A worktree workspace is a checkout of the repository's HEAD with a git
// folder of its own, which the tools may write: its objects are the repository's,
// through git's alternates, which the tools may only read, and what the tools' git adds
// (objects, commits, branches, an index) goes to the workspace's git folder, so the
// repository stays as it was. Its config is the repository's, without its credentials.
type worktreeRepo struct {
	base   string // the commit at the repository's HEAD
	config []byte // the repository's config, without credentials or what names its folders
	refs   []byte // the repository's refs, as a packed-refs file
	// objects are the repository's object folder and those its alternates name, which
	// the tools must be able to read.
	objects []string
	// shallow and exclude are the repository's shallow file (a shallow clone's, as CI's
	// checkouts are) and info/exclude; worktreeConfig and sparse are the config.worktree
	// and info/sparse-checkout of the work tree of the workspace's folder (a sparse
	// checkout's settings and patterns). Each is nil where there is none.
	shallow, exclude, worktreeConfig, sparse []byte
}

// worktreeRepo reads, once per run, what the worktrees of the repository of folder dir
// are made from.
func (st *runState) worktreeRepo(ctx context.Context, dir string, creds *checkoutCreds) (*worktreeRepo, error) {
	// The first session's context, without its end: the source serves every session.
	readCtx := context.WithoutCancel(ctx)
	return st.worktrees.get(dir, func() (*worktreeRepo, error) { return st.git.readWorktreeRepo(readCtx, dir, creds) })
}

// readWorktreeRepo reads what the worktrees of the repository of dir are made from;
// creds are the credentials its configs hold, which the worktrees' config leaves out.
func (g gitBin) readWorktreeRepo(ctx context.Context, dir string, creds *checkoutCreds) (*worktreeRepo, error) {
	// The folders are those of dir's own work tree where it has its own (a sparse
	// checkout's patterns and settings).
	out, err := g.run(ctx, dir, "rev-parse", "--git-common-dir", "--git-path", "config.worktree",
		"--git-path", "info/sparse-checkout", "HEAD^{commit}")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 {
		return nil, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	for i, p := range lines[:3] {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		lines[i] = filepath.Clean(p)
	}
	common := lines[0]
	r := &worktreeRepo{base: lines[3], objects: objectFolders(filepath.Join(common, "objects"))}
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
	f, err := os.CreateTemp("", "agentrun-gitconfig-*")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	for _, key := range []string{"core.worktree", "extensions.refStorage"} {
		// Exit 5: the config has no such key.
		if _, err := g.run(ctx, filepath.Dir(f.Name()), "config", "--file", f.Name(), "--unset-all", key); err != nil {
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 5 {
				return nil, err
			}
		}
	}
	return os.ReadFile(f.Name())
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

// make checks the repository's HEAD out at dst, detached, with its own git folder in
// dst/.git, and copies that folder to private: the runner's git reads the session's
// changes through the copy, which the tools cannot reach, not through the one they had
// in their hands.
func (r *worktreeRepo) make(ctx context.Context, g gitBin, dst, private string) error {
	gitDir := filepath.Join(dst, ".git")
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags", "info"} {
		if err := os.MkdirAll(filepath.Join(gitDir, d), 0o755); err != nil {
			return err
		}
	}
	files := []struct {
		name string
		b    []byte
	}{
		{"HEAD", []byte(r.base + "\n")},
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
	args := append([]string{"--git-dir=" + gitDir, "--work-tree=" + dst}, sessionGit...)
	if _, err := g.run(ctx, dst, append(args, "read-tree", "--reset", "-u", "HEAD")...); err != nil {
		return err
	}
	return copyTree(gitDir, private, "")
}

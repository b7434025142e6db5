package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/pathname"
	"github.com/agentrun/agentrun/sink"
)

// workspace is the folder a session works in.
type workspace struct {
	// dir is the folder the session works in; root the folder made for it, which
	// holds dir: a worktree workspace's checkout, whose dir is the folder of the spec's
	// dir in it (a service of a monorepo). Elsewhere root is dir.
	dir, root string
	mode      jobs.WorkspaceMode
	// gitDir is the runner's own copy of a worktree workspace's git folder, made
	// before the session ran, out of the tools' reach (checkoutTree): the
	// runner's git reads the worktree through it, not through the .git the session
	// had in its hands.
	gitDir string
	git    gitBin
	// readable are the folders outside the workspace that the tools' git must read:
	// the object folders of a worktree and of a copy with a git folder of its own,
	// which are the repository's. writable are those it must write: the git folder
	// of a shared workspace whose .git file names one outside it.
	readable, writable []string
	// credentials are the files of the checkout that hold its credentials for its
	// forge (checkoutCreds), which the tools must not see; credsRefused says why the
	// tools cannot work in it, where they would see a config that holds them.
	credentials  []string
	credsRefused error
	// guards keep what of the git folders the tools may write would run a program of
	// the session's in the next git there, or make git lie to the checks: those of a
	// shared workspace, a copy or a worktree, and those of the writable paths.
	guards []*gitGuard
}

// prepareWorkspace gives s its folder: the spec's folder itself (shared), a fresh copy
// of it (copy) or a git worktree of it (worktree), both under OUT/workspaces/<key>.
func (st *runState) prepareWorkspace(ctx context.Context, s jobs.Session) (*workspace, error) {
	src := s.Settings.Workspace.Dir
	mode := s.Settings.Workspace.Mode
	info, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("workspace: %s is not a directory", src)
	}
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	creds, err := st.checkoutCreds(ctx, real)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	switch mode {
	case jobs.WorkspaceCopy, jobs.WorkspaceWorktree:
	default:
		ws := &workspace{dir: real, root: real, mode: mode, readable: alternatesOf(real)}
		ws.credentials, ws.credsRefused = creds.forTools(false)
		guard, err := st.sharedGuard(real, func() []string { return creds.trees })
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		ws.guards = append(ws.guards, guard)
		if common := outsideGitDir(real); common != "" {
			// A linked worktree or a submodule: the tools' git works in its git
			// folder, elsewhere, as it does in a checkout's own, and it is guarded
			// as that is.
			if guard, err = st.folderGuard(common); err != nil {
				return nil, fmt.Errorf("workspace: %w", err)
			}
			ws.guards = append(ws.guards, guard)
			ws.writable = []string{common}
		}
		return ws, nil
	}
	out, err := filepath.Abs(st.r.opts.Out)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	dst := filepath.Join(out, WorkspacesDir, s.Key)
	if err := removeIfExists(dst); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if mode == jobs.WorkspaceCopy {
		return st.copyWorkspace(ctx, src, real, dst, out, creds)
	}
	repo, err := st.gitSource(ctx, real, creds)
	if err != nil {
		return nil, fmt.Errorf("workspace: worktree of %s: %w", src, err)
	}
	private := filepath.Join(out, WorkspacesDir, privateGitDirs, s.Key)
	if err := removeIfExists(private); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	done, err := st.checkoutTree(ctx, repo, dst, repo.base, creds, 0)
	if err == nil {
		// The runner's git reads the session's changes through this copy, which the
		// tools cannot reach, not through the git folder they had in their hands.
		err = copyTree(filepath.Join(dst, ".git"), private)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: worktree of %s: %w", src, err)
	}
	root, err := filepath.EvalSymlinks(dst)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	ws := &workspace{dir: root, root: root, mode: mode, gitDir: private, git: st.git, readable: done.readable}
	if rel, err := filepath.Rel(repo.top, real); err == nil && rel != "." && filepath.IsLocal(rel) {
		// The session works in the folder of the spec's dir; the rest of the
		// checkout, its git folder among it, is the tools' to write too.
		ws.dir = filepath.Join(root, rel)
		if !isDir(ws.dir) {
			return nil, fmt.Errorf("workspace: %s is not in the repository's HEAD", rel)
		}
		ws.writable = []string{root}
	}
	// The worktree's config is a clean copy, as a copy's is; the repository's own
	// configs are hidden, since the repository may lie where the tools may read.
	ws.credentials, ws.credsRefused = creds.forTools(true)
	guard, err := newGitGuard(root, done.trees) // and its submodules
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	ws.guards = append(ws.guards, guard)
	return ws, nil
}

// outsideGitDir is the common git folder of the work tree dir, with its links resolved,
// where the .git file of dir names one outside dir (a linked worktree's, a submodule's);
// "" where dir has its own, or none.
func outsideGitDir(dir string) string {
	info, err := os.Lstat(filepath.Join(dir, ".git"))
	if err != nil || !info.Mode().IsRegular() {
		return ""
	}
	target, err := gitFileTarget(dir)
	if err != nil {
		return ""
	}
	common, err := filepath.EvalSymlinks(commonDir(target))
	if err != nil || pathname.Within(dir, common) {
		return ""
	}
	return common
}

// gitDirOf is the git folder of the work tree dir: its .git folder, or the one its .git
// file names (gitFileTarget).
func gitDirOf(dir string) (string, error) {
	gitDir := filepath.Join(dir, ".git")
	info, err := os.Stat(gitDir)
	if err != nil {
		return "", err
	}
	if info.IsDir() {
		return gitDir, nil
	}
	return gitFileTarget(dir)
}

// gitFileTarget is the git folder that the .git file of the work tree dir names (a
// worktree's, a submodule's), as an absolute path.
func gitFileTarget(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return "", err
	}
	p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return "", fmt.Errorf("%s/.git names no git folder", dir)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return p, nil
}

// CheckWorkspaces checks, before any session starts, that the workspaces of sessions
// can be made: each folder exists, and a worktree workspace is a git repository with a
// commit. The problems are a *jobs.SpecError naming the place in the spec.
func CheckWorkspaces(ctx context.Context, spec *jobs.Spec, sessions []jobs.Session) error {
	return spec.CheckWorkspaces(sessions, func(dir string) error { return worktreeSource(ctx, dir) })
}

// worktreeSource says why dir cannot give worktrees: it is no git work tree, or its
// HEAD has no commit to check out.
func worktreeSource(ctx context.Context, dir string) error {
	git := lookGit()
	out, err := git.run(ctx, dir, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(string(out)) != "true" {
		if err == nil {
			err = errors.New("inside the repository's git folder")
		}
		return fmt.Errorf("%s is not a git repository (%w)", dir, err)
	}
	if _, err := git.run(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return fmt.Errorf("the git repository of %s has no commit at HEAD yet", dir)
	}
	return nil
}

// finish saves what a worktree session changed as changes.patch in the session folder
// and removes the worktree; copies stay for inspection.
func (w *workspace) finish(sessionDir string, files *sink.Files) error {
	if w.mode != jobs.WorkspaceWorktree {
		return nil
	}
	ctx := context.Background()
	// A folder git cannot add (a repository the session made with git init and no
	// commit, as cargo new and npm init leave) is left out of the patch, not the rest.
	var partial error
	if _, err := w.gitWork(ctx, "add", "-A", "--ignore-errors"); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			return err
		}
		partial = fmt.Errorf("workspace: %s leaves out what git could not add: %w", PatchFile, err)
	}
	// The patch is of the files as they are: no text converter or external diff of
	// the user's config, which the session's .gitattributes could apply to any file.
	args := []string{"diff", "--cached", "--no-textconv", "--no-ext-diff", "--binary", "HEAD"}
	if files.Secrets() {
		// A binary hunk is compressed, where no mask can find a secret: with secrets
		// the patch says only that a binary file differs.
		args = slices.DeleteFunc(args, func(a string) bool { return a == "--binary" })
	}
	diff, err := w.gitWork(ctx, args...)
	if err != nil {
		return err
	}
	// Masked like every artifact: in file contents and in file names.
	if err := files.WriteFile(filepath.Join(sessionDir, PatchFile), diff, false); err != nil {
		return err
	}
	for _, d := range []string{w.root, w.gitDir} {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("workspace: %w", err)
		}
	}
	return partial
}

// sessionGit are the settings under which the runner's git reads a worktree the session
// had in its hands: no fsmonitor hook, hooks or untracked cache of any config, and no
// walk into the session's nested repositories.
var sessionGit = []string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
	"-c", "core.untrackedCache=false", "-c", "diff.submodule=short", "-c", "status.submoduleSummary=false"}

// gitWork runs a git command on the worktree w, unconfined, so with the runner's copy of
// its git folder (not whatever the worktree's .git holds now) and sessionGit:
// the session wrote every file of the worktree, and no command of its may run here.
func (w *workspace) gitWork(ctx context.Context, args ...string) ([]byte, error) {
	full := append([]string{"--git-dir=" + w.gitDir, "--work-tree=" + w.root}, sessionGit...)
	return w.git.run(ctx, w.root, append(full, args...)...)
}

// gitBin is the git executable the runner runs, found on PATH before any session ran
// (lookGit): a session that may write a folder on PATH ahead of git's own (such as
// ~/.local/bin under a writable home) could put a program named git there, and the
// runner's git runs unconfined.
type gitBin string

// lookGit finds git on PATH; "git", which fails to start, when there is none.
func lookGit() gitBin {
	p, err := exec.LookPath("git")
	if err != nil {
		return "git"
	}
	return gitBin(p)
}

// run runs a git command in dir and returns its stdout. It gets of the runner's
// environment only gitEnv's part.
func (g gitBin) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := g.command(ctx, append([]string{"-C", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// command is a git command of the runner's, with gitEnv's part of its environment.
func (g gitBin) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, string(g), args...)
	cmd.Env = gitEnv(os.Environ())
	return cmd
}

// gitKept are the variables of the runner's environment that its git gets, with
// those of git's own configuration (GIT_CONFIG_GLOBAL, GIT_CONFIG_COUNT, …) and the
// locale's (LC_*): what git and a filter of the user's config need. Not the rest,
// which holds the API keys: git runs the programs of the user's config (a clean
// filter, such as git-lfs), which the session's .gitattributes may apply to any file.
var gitKept = map[string]bool{"PATH": true, "HOME": true, "USER": true, "LANG": true, "TMPDIR": true,
	"XDG_CONFIG_HOME": true, "GIT_EXEC_PATH": true}

// gitEnv is the part of environment base that the runner's git gets.
func gitEnv(base []string) []string {
	return pickEnv(base, func(name string) bool {
		return gitKept[name] || strings.HasPrefix(name, "GIT_CONFIG") || strings.HasPrefix(name, "LC_")
	})
}

// copyTree copies the folder src to dst, keeping modes and symlinks, and skipping the
// folders skip, by their absolute paths (the output folder, when it lies inside src; a
// repository's objects, which a copy reads through its alternates).
func copyTree(src, dst string, skip ...string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if abs, aerr := filepath.Abs(p); aerr == nil && slices.Contains(skip, abs) {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // sockets, devices and pipes are not copied
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

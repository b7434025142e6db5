package runner_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
)

// TestWorktreeGitWorks runs a worktree session whose tools use git as a coding agent
// does: status, log, add, commit and a branch. Each must work at both levels, the patch
// must hold the work the session committed (the change from the commit it started at),
// and the repository must stay as it was: no object, ref or worktree of the session's,
// and no file the tools tried to put into its object folder.
func TestWorktreeGitWorks(t *testing.T) {
	t.Parallel()
	// clone makes a clone of repo, with a second commit, by git clone's args.
	clone := func(t *testing.T, dir, repo string, args ...string) string {
		require.NoError(t, os.WriteFile(filepath.Join(repo, "second.txt"), []byte("2\n"), 0o644))
		git(t, repo, "add", "-A")
		git(t, repo, "commit", "-q", "-m", "second")
		dst := filepath.Join(dir, "clone")
		git(t, dir, append(args, dst)...)
		return dst
	}
	for name, setup := range map[string]func(t *testing.T, dir, repo string) string{
		"a repository": func(_ *testing.T, _, repo string) string { return repo },
		// CI's checkouts: actions/checkout fetches one commit.
		"a shallow clone": func(t *testing.T, dir, repo string) string {
			return clone(t, dir, repo, "clone", "-q", "--depth", "1", "file://"+repo)
		},
		// Its objects are another repository's too, through its alternates.
		"a clone that shares objects": func(t *testing.T, dir, repo string) string {
			return clone(t, dir, repo, "clone", "-q", "--shared", repo)
		},
		// The worktree has the files the repository's checkout has.
		"a sparse checkout": func(t *testing.T, _, repo string) string {
			require.NoError(t, os.MkdirAll(filepath.Join(repo, "docs"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(repo, "docs", "big.txt"), []byte("big\n"), 0o644))
			git(t, repo, "add", "-A")
			git(t, repo, "commit", "-q", "-m", "folder")
			git(t, repo, "sparse-checkout", "set", "--no-cone", "/*", "!/docs/")
			require.NoFileExists(t, filepath.Join(repo, "docs", "big.txt"))
			return repo
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
				testWorktreeGit(t, level, dir, setup(t, dir, newRepo(t, nil)))
			})
		})
	}
}

// testWorktreeGit runs TestWorktreeGitWorks's session at level in a worktree of repo,
// with its output folder in dir.
func testWorktreeGit(t *testing.T, level sandbox.Level, dir, repo string) {
	objects := filepath.Join(repo, ".git", "objects")
	subject := strings.TrimSpace(git(t, repo, "log", "-1", "--format=%s"))
	cmd := "s=$(git status --porcelain) && test -z \"$s\" && echo status-ok; " +
		"echo new > b.txt && echo bye > hello.txt && git add -A && git -c user.name=a -c user.email=a@example.com commit -qm work && echo commit-ok; " +
		"git branch feature && echo branch-ok; echo log: $(git log --format=%s); git status --porcelain; " +
		"touch " + objects + "/planted; ls; echo done"
	shared := objectFolders(t, objects)
	if strings.Contains(t.Name(), "shares") {
		require.Len(t, shared, 2, "the clone shares no objects: the test proves nothing")
	}
	before, refs := objectFiles(t, shared), git(t, repo, "for-each-ref")
	sum, out, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s}, workspace: {dir: %q, mode: worktree}", level, repo), cmd)
	assert.Equal(t, protocol.StatusSuccess, sum.Sessions[0].Status, sum.Text())
	for _, want := range []string{"status-ok", "commit-ok", "branch-ok", "log: work " + subject} {
		assert.Contains(t, output, want, "the tools' git failed at level %s:\n%s", level, output)
	}
	patch := readFile(t, filepath.Join(out, runner.SessionsDir, "agent", runner.PatchFile))
	assert.Contains(t, patch, "b/b.txt", "the committed work is in the patch")
	assert.Contains(t, patch, "+bye", "the committed work is in the patch")
	assert.NoFileExists(t, filepath.Join(objects, "planted"), "ESCAPE: the tools wrote the repository's objects")
	assert.Equal(t, before, objectFiles(t, shared), "the repository's objects changed")
	assert.Equal(t, refs, git(t, repo, "for-each-ref"), "the repository's refs changed")
	assert.Equal(t, 1, strings.Count(git(t, repo, "worktree", "list", "--porcelain"), "worktree "), "the repository has a worktree of the session's")
	assert.Equal(t, "hello world\n", readFile(t, filepath.Join(repo, "hello.txt")))
	if _, err := os.Stat(filepath.Join(repo, "docs")); err != nil {
		assert.NotContains(t, output, "\ndocs\n", "the worktree has files the repository's checkout has not")
	}
	assert.NoDirExists(t, filepath.Join(out, runner.WorkspacesDir, "agent"), "the worktree is removed")
}

// objectFolders are a repository's object folder and the one its alternates name.
func objectFolders(t *testing.T, objects string) []string {
	t.Helper()
	out := []string{objects}
	if b, err := os.ReadFile(filepath.Join(objects, "info", "alternates")); err == nil {
		out = append(out, strings.TrimSpace(string(b)))
	}
	return out
}

// objectFiles are the paths of the files in object folders.
func objectFiles(t *testing.T, folders []string) []string {
	t.Helper()
	var out []string
	for _, objects := range folders {
		require.NoError(t, filepath.WalkDir(objects, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, p)
			}
			return err
		}))
	}
	return out
}

// TestWorktreeOfAWritableRepository: where the spec lets the tools write the repository a
// worktree is of, the worktree's reading its objects must not take that from them.
func TestWorktreeOfAWritableRepository(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		repo := newRepo(t, nil)
		cmd := "git -C " + repo + " -c user.name=a -c user.email=a@example.com commit -q --allow-empty -m theirs && echo committed; echo done"
		_, _, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s, writable: [%q]}, workspace: {dir: %q, mode: worktree}", level, repo, repo), cmd)
		assert.Contains(t, output, "committed")
		assert.Equal(t, "theirs", strings.TrimSpace(git(t, repo, "log", "-1", "--format=%s")))
	})
}

// TestWorktreeRunnersGitFolderIsOutOfReach: the runner's git reads a worktree, unconfined,
// through its own copy of the worktree's git folder, beside the worktree in the output
// folder. The tools must not reach it, even where they may read the folder that holds the
// output folder: a config of theirs there would run its fsmonitor hook in the runner.
func TestWorktreeRunnersGitFolderIsOutOfReach(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		repo := newRepo(t, nil)
		marker := filepath.Join(dir, "escaped")
		private := filepath.Join(dir, "out", runner.WorkspacesDir, ".git-private", "agent")
		cmd := "ls " + filepath.Dir(private) + "; printf '[core]\\n\\tfsmonitor = \"touch " + marker + "; false\"\\n' >> " + private + "/config; " +
			"cat " + private + "/config; echo done"
		_, out, output := runBash(t, dir, fmt.Sprintf("bash_mode: \"0467\", sandbox: {level: %s, readable: [%q]}, workspace: {dir: %q, mode: worktree}", level, dir, repo), cmd)
		assert.NotContains(t, output, "repositoryformatversion", "LEAK: the tools read the runner's git folder")
		assert.NoFileExists(t, marker, "ESCAPE: the runner's git ran the session's config")
		assert.FileExists(t, filepath.Join(out, runner.SessionsDir, "agent", runner.PatchFile))
	})
}

// TestCopyHasItsOwnGit: a copy of a work tree whose git folder lies elsewhere (a linked
// worktree's, a submodule's, whose .git file names it) has its git as the original has
// it, at both levels: its branch, its history, its uncommitted change, and a commit of
// the session's, which stays in the copy. The repository, and the original's index,
// stay as they were.
func TestCopyHasItsOwnGit(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]func(t *testing.T, dir, repo string) (tree, gitDir string){
		"a linked worktree": func(t *testing.T, dir, repo string) (string, string) {
			tree := filepath.Join(dir, "feature")
			git(t, repo, "worktree", "add", "-q", "-b", "feature", tree)
			return tree, filepath.Join(repo, ".git", "worktrees", "feature")
		},
		"a submodule": func(t *testing.T, dir, repo string) (string, string) {
			super := filepath.Join(dir, "super")
			require.NoError(t, os.Mkdir(super, 0o755))
			git(t, super, "init", "-q")
			git(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", repo, "sub")
			git(t, super, "commit", "-q", "-m", "sub")
			return filepath.Join(super, "sub"), filepath.Join(super, ".git", "modules", "sub")
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
				repo := newRepo(t, nil)
				tree, gitDir := setup(t, dir, repo)
				require.FileExists(t, filepath.Join(tree, ".git"), "the work tree has no .git file: the test proves nothing")
				branch := strings.TrimSpace(git(t, tree, "rev-parse", "--abbrev-ref", "HEAD"))
				require.NoError(t, os.WriteFile(filepath.Join(tree, "hello.txt"), []byte("changed\n"), 0o644))
				cmd := "echo status: $(git status --porcelain); echo branch: $(git rev-parse --abbrev-ref HEAD); echo log: $(git log --format=%s); " +
					"git add -A && git -c user.name=a -c user.email=a@example.com commit -qm work && echo commit-ok; echo after: $(git log --format=%s); echo done"
				shared := objectFolders(t, filepath.Join(repo, ".git", "objects"))
				before, refs := objectFiles(t, shared), git(t, repo, "for-each-ref")
				index := readFile(t, filepath.Join(gitDir, "index"))
				_, out, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s}, workspace: {dir: %q, mode: copy}", level, tree), cmd)
				for _, want := range []string{"status: M hello.txt", "branch: " + branch, "log: start", "commit-ok", "after: work start"} {
					assert.Contains(t, output, want, "the tools' git failed at level %s:\n%s", level, output)
				}
				copied := filepath.Join(out, runner.WorkspacesDir, "agent")
				assert.Equal(t, "work", strings.TrimSpace(git(t, copied, "log", "-1", "--format=%s")), "the session's commit is in the copy")
				assert.Equal(t, before, objectFiles(t, shared), "the repository's objects changed")
				assert.Equal(t, refs, git(t, repo, "for-each-ref"), "the repository's refs changed")
				assert.Equal(t, index, readFile(t, filepath.Join(gitDir, "index")), "the original's index changed")
				assert.Equal(t, "changed\n", readFile(t, filepath.Join(tree, "hello.txt")))
			})
		})
	}
}

// TestSharedWorkTreeWithItsGitElsewhere: a shared workspace that is a linked worktree or
// a submodule, whose .git file names a git folder outside it, works with git as a
// checkout does, at both levels: its git reads the history and commits to its branch.
// Its git folder is guarded as a checkout's own: an fsmonitor hook the session put in
// the repository's config is gone before the user's next git runs.
func TestSharedWorkTreeWithItsGitElsewhere(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]func(t *testing.T, dir, repo string) (tree, user string){
		"a linked worktree": func(t *testing.T, dir, repo string) (string, string) {
			tree := filepath.Join(dir, "feature")
			git(t, repo, "worktree", "add", "-q", "-b", "feature", tree)
			return tree, repo
		},
		"a submodule": func(t *testing.T, dir, repo string) (string, string) {
			super := filepath.Join(dir, "super")
			require.NoError(t, os.Mkdir(super, 0o755))
			git(t, super, "init", "-q")
			git(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", repo, "sub")
			git(t, super, "commit", "-q", "-m", "sub")
			return filepath.Join(super, "sub"), filepath.Join(super, "sub")
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
				repo := newRepo(t, nil)
				tree, user := setup(t, dir, repo)
				marker := filepath.Join(dir, "escaped")
				cmd := "echo log: $(git log --format=%s); echo new > b.txt && git add -A && git -c user.name=a -c user.email=a@example.com commit -qm work && echo commit-ok; " +
					"git config --file \"$(git rev-parse --git-common-dir)/config\" core.fsmonitor 'touch " + marker + "; false' && echo planted; echo done"
				_, _, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s}, workspace: {dir: %q, mode: shared}", level, tree), cmd)
				for _, want := range []string{"log: start", "commit-ok", "planted"} {
					assert.Contains(t, output, want, "the tools' git failed at level %s:\n%s", level, output)
				}
				assert.Equal(t, "work", strings.TrimSpace(git(t, tree, "log", "-1", "--format=%s")), "the session's commit is the work tree's")
				git(t, user, "status")
				git(t, tree, "status")
				assert.NoFileExists(t, marker, "ESCAPE: the user's git ran the session's fsmonitor hook")
			})
		})
	}
}

// TestWorktreeHasTheLFSFiles: a worktree of a repository whose large files are in Git
// LFS has their content, not their pointers, and its git status is clean at both
// levels: git-lfs finds the objects through the worktree's alternates.
func TestWorktreeHasTheLFSFiles(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		if os.Getenv("AGENTRUN_REQUIRE_TOOLS") != "" {
			t.Fatal("git-lfs is not installed (apt-get install git-lfs) and AGENTRUN_REQUIRE_TOOLS is set")
		}
		t.Skip("git-lfs is not installed (apt-get install git-lfs)")
	}
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		repo := newRepo(t, nil)
		git(t, repo, "lfs", "install", "--local")
		git(t, repo, "lfs", "track", "*.bin")
		for _, content := range []string{"the first content\n", "the large file's content\n"} {
			require.NoError(t, os.WriteFile(filepath.Join(repo, "big.bin"), []byte(content), 0o644))
			git(t, repo, "add", "-A")
			git(t, repo, "commit", "-q", "-m", "large")
		}
		require.Contains(t, git(t, repo, "show", "HEAD:big.bin"), "git-lfs.github.com/spec", "the file is no LFS pointer: the test proves nothing")
		store := objectFiles(t, []string{filepath.Join(repo, ".git", "lfs", "objects")})
		require.Len(t, store, 2)
		kept := map[string]string{}
		for _, p := range store {
			kept[p] = readFile(t, p)
		}
		// The tools write every file of the worktree's LFS store: none may be the
		// repository's (git-lfs links what it finds through the alternates).
		cmd := "cat big.bin; echo status: $(git status --porcelain); git lfs ls-files; " +
			"find .git/lfs -type f -exec sh -c 'echo tampered > \"$1\"' _ {} \\; ; " +
			"git checkout -q HEAD~1 -- big.bin && echo before: $(cat big.bin); echo done"
		_, out, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s}, workspace: {dir: %q, mode: worktree}", level, repo), cmd)
		assert.Contains(t, output, "the large file's content", "the worktree has the LFS pointer")
		assert.Contains(t, output, "status:\n", "git status is not clean:\n%s", output)
		assert.Contains(t, output, "* big.bin")
		assert.Contains(t, output, "before: the first content", "the tools' git-lfs found no earlier content")
		for p, content := range kept {
			assert.Equal(t, content, readFile(t, p), "ESCAPE: the tools wrote the repository's LFS object %s", p)
		}
		assert.Contains(t, readFile(t, filepath.Join(out, runner.SessionsDir, "agent", runner.PatchFile)), "b/big.bin")
	})
}

// TestCopyHasTheOriginalsHeadOfItsTime: each copy of a linked worktree has the HEAD the
// original has when the copy is made, as it has its files: a commit in the original
// after the run started (here by the first session, which may write it) is the next
// copy's HEAD, and its git status is clean.
func TestCopyHasTheOriginalsHeadOfItsTime(t *testing.T) {
	t.Parallel()
	requireLevel(t, sandbox.LevelStrict)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	repo := newRepo(t, nil)
	tree := filepath.Join(dir, "feature")
	git(t, repo, "worktree", "add", "-q", "-b", "feature", tree)
	first := "echo later > " + tree + "/later.txt && git -C " + tree + " add -A && git -C " + tree + " -c user.name=a -c user.email=a@example.com commit -qm later && echo committed"
	second := "echo head: $(git log -1 --format=%s); echo status: $(git status --porcelain); echo done"
	scripts := scriptsWith(t, "first", fmt.Sprintf("steps:\n  - tool_calls: [{name: Bash, input: {command: %q}}]\n  - text: \"Done.\"\n", first),
		"second", fmt.Sprintf("steps:\n  - tool_calls: [{name: Bash, input: {command: %q}}]\n  - text: \"Done.\"\n", second))
	out := filepath.Join(dir, "out")
	spec := fmt.Sprintf("version: 1\nconcurrency: 1\ndefaults: {tools: [Bash], env: {PATH: /usr/bin:/bin}, sandbox: {level: strict}, workspace: {dir: %q, mode: copy}}\n"+
		"jobs:\n  - {id: a-first, model: first, prompt: Commit., sandbox: {writable: [%q, %q]}}\n  - {id: b-second, model: second, prompt: Look.}\n",
		tree, tree, filepath.Join(repo, ".git"))
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
		Run(context.Background(), writeSpec(t, dir, spec))
	require.NoError(t, err)
	require.Len(t, sum.Sessions, 2)
	require.Contains(t, toolResults(t, out, "a-first")[0].Content, "committed")
	require.Equal(t, "later", strings.TrimSpace(git(t, tree, "log", "-1", "--format=%s")))
	output := toolResults(t, out, "b-second")[0].Content
	require.Contains(t, output, "done")
	assert.Contains(t, output, "head: later\n")
	assert.Contains(t, output, "status:\n", "the copy's git status is not clean:\n%s", output)
}

// TestWorktreeChecksOutTheSubmodules: a worktree of a repository whose submodules are
// checked out has them too, at the commits its tree records, and their git works in
// the sandbox at both levels: git worktree add left them empty. A submodule's
// repository stays as it was.
func TestWorktreeChecksOutTheSubmodules(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		lib := newRepo(t, map[string]string{"lib.txt": "the library\n"})
		super := filepath.Join(dir, "super")
		require.NoError(t, os.Mkdir(super, 0o755))
		git(t, super, "init", "-q")
		git(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib")
		git(t, super, "commit", "-q", "-m", "with the library")
		module := filepath.Join(super, ".git", "modules", "vendor", "lib", "objects")
		require.DirExists(t, module)
		before := objectFiles(t, []string{module})
		cmd := "echo status: $(git status --porcelain); cat vendor/lib/lib.txt; echo sub: $(git -C vendor/lib log -1 --format=%s); " +
			"echo more >> vendor/lib/lib.txt && git -C vendor/lib -c user.name=a -c user.email=a@example.com commit -qam more && echo sub-commit-ok; echo done"
		_, out, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s}, workspace: {dir: %q, mode: worktree}", level, super), cmd)
		for _, want := range []string{"status:\n", "the library\n", "sub: start\n", "sub-commit-ok"} {
			assert.Contains(t, output, want, "at level %s:\n%s", level, output)
		}
		assert.Contains(t, readFile(t, filepath.Join(out, runner.SessionsDir, "agent", runner.PatchFile)), "Subproject commit", "the submodule's new commit is in the patch")
		assert.Equal(t, before, objectFiles(t, []string{module}), "the submodule's repository changed")
		assert.Equal(t, "the library\n", readFile(t, filepath.Join(super, "vendor", "lib", "lib.txt")))
	})
}

// runBash runs one session, agent, whose one tool call is the Bash command cmd, with
// the spec's defaults set by settings (its sandbox and workspace) and its output folder
// in dir, and returns the run's summary, the output folder and the call's output, which
// must have run to the end (its last command echoes done).
func runBash(t *testing.T, dir, settings, cmd string) (*runner.Summary, string, string) {
	t.Helper()
	scripts := scriptsWith(t, "agent", fmt.Sprintf("steps:\n  - tool_calls: [{name: Bash, input: {command: %q}}]\n  - text: \"Done.\"\n", cmd))
	out := filepath.Join(dir, "out")
	spec := "version: 1\ndefaults: {tools: [Bash], env: {PATH: /usr/bin:/bin}, " + settings + "}\njobs:\n  - {id: agent, model: agent, prompt: Go.}\n"
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
		Run(context.Background(), writeSpec(t, dir, spec))
	require.NoError(t, err)
	require.Len(t, sum.Sessions, 1)
	results := toolResults(t, out, "agent")
	require.Len(t, results, 1)
	require.Contains(t, results[0].Content, "done")
	return sum, out, results[0].Content
}

// TestWorkspaceReadsItsAlternates: a repository whose objects are partly another's,
// through its alternates (a clone made with --shared or --reference, as CI keeps a
// mirror to clone from), has its history in a copy and in a shared workspace at both
// levels, though that other repository lies where the tools may not look.
func TestWorkspaceReadsItsAlternates(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"copy", "shared"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
				mirror := newRepo(t, nil)
				clone := filepath.Join(dir, "clone")
				git(t, dir, "clone", "-q", "--shared", mirror, clone)
				require.FileExists(t, filepath.Join(clone, ".git", "objects", "info", "alternates"))
				_, _, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s}, workspace: {dir: %q, mode: %s}", level, clone, mode),
					"echo log: $(git log --format=%s); echo status: $(git status --porcelain); cat hello.txt; echo done")
				assert.Contains(t, output, "log: start\n", "at level %s:\n%s", level, output)
				assert.Contains(t, output, "status:\n", "at level %s:\n%s", level, output)
			})
		})
	}
}

// TestWorktreeWorksInItsFolder: a worktree workspace whose dir is a folder inside the
// repository (a service of a monorepo) is a checkout of the whole repository in which
// the session works in that folder, at both levels: its tools start there and its
// checks run there, git works, and the patch is of the whole checkout.
func TestWorktreeWorksInItsFolder(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		repo := newRepo(t, nil)
		require.NoError(t, os.MkdirAll(filepath.Join(repo, "services", "api"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repo, "services", "api", "main.txt"), []byte("api\n"), 0o644))
		git(t, repo, "add", "-A")
		git(t, repo, "commit", "-q", "-m", "api")
		cmd := "echo here: $(basename $PWD); cat main.txt ../../hello.txt; echo status: $(git status --porcelain); echo changed > main.txt; echo done"
		sum, out, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s}, workspace: {dir: %q, mode: worktree}", level, filepath.Join(repo, "services", "api")), cmd)
		for _, want := range []string{"here: api\n", "api\nhello world\n", "status:\n"} {
			assert.Contains(t, output, want, "at level %s:\n%s", level, output)
		}
		assert.Equal(t, protocol.StatusSuccess, sum.Sessions[0].Status, sum.Text())
		assert.Contains(t, readFile(t, filepath.Join(out, runner.SessionsDir, "agent", runner.PatchFile)), "b/services/api/main.txt")
	})
}

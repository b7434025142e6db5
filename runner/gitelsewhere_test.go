package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
)

// TestCopyHasItsOwnGit: a copy of a work tree whose git folder lies elsewhere (a linked
// worktree's, a submodule's, whose .git file names it) has its git as the original has
// it, at both levels: its branch, its history, its uncommitted change, and a commit of
// the session's, which stays in the copy. The repository, and the original's index,
// stay as they were.
func TestCopyHasItsOwnGit(t *testing.T) {
	t.Parallel()
	for name, setup := range gitElsewhere {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
				repo := newRepo(t, nil)
				tree, gitDir, _ := setup(t, dir, repo)
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
	for name, setup := range gitElsewhere {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
				repo := newRepo(t, nil)
				tree, _, user := setup(t, dir, repo)
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

// gitElsewhere makes, from the repository repo in folder dir, the work trees whose .git
// file names a git folder outside them: a linked worktree and a submodule's checkout.
// It returns the work tree, its git folder, and the work tree in which the user runs
// git next (the repository's, or the submodule's own).
var gitElsewhere = map[string]func(t *testing.T, dir, repo string) (tree, gitDir, user string){
	"a linked worktree": func(t *testing.T, dir, repo string) (string, string, string) {
		tree := filepath.Join(dir, "feature")
		git(t, repo, "worktree", "add", "-q", "-b", "feature", tree)
		return tree, filepath.Join(repo, ".git", "worktrees", "feature"), repo
	},
	"a submodule": func(t *testing.T, dir, repo string) (string, string, string) {
		super := superproject(t, dir, repo, "sub")
		tree := filepath.Join(super, "sub")
		return tree, filepath.Join(super, ".git", "modules", "sub"), tree
	},
}

// superproject makes a repository in dir/super with repo as its submodule at path, and
// returns its work tree.
func superproject(t *testing.T, dir, repo, path string) string {
	t.Helper()
	super := filepath.Join(dir, "super")
	require.NoError(t, os.Mkdir(super, 0o755))
	git(t, super, "init", "-q")
	git(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", repo, path)
	git(t, super, "commit", "-q", "-m", "with "+path)
	return super
}

// TestCopyReadsTheObjects: a copy of a repository holds none of its objects, which
// its git reads through its alternates, and its git works at both levels: status,
// history, a commit, which stays in the copy. The repository's objects stay as they
// were, and after the run the user's git in the copy still reads its history.
func TestCopyReadsTheObjects(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		repo := newRepo(t, map[string]string{"more.txt": "more\n"})
		objects := filepath.Join(repo, ".git", "objects")
		before := objectFiles(t, []string{objects})
		cmd := "echo status: $(git status --porcelain); echo log: $(git log --format=%s); echo own: $(find .git/objects -type f | grep -v info/alternates | wc -l); " +
			"echo x > new.txt && git add -A && git -c user.name=a -c user.email=a@example.com commit -qm work && echo commit-ok; echo done"
		_, out, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s}, workspace: {dir: %q, mode: copy}", level, repo), cmd)
		for _, want := range []string{"status:\n", "log: start\n", "own: 0\n", "commit-ok"} {
			assert.Contains(t, output, want, "at level %s:\n%s", level, output)
		}
		assert.Equal(t, before, objectFiles(t, []string{objects}), "the repository's objects changed")
		copied := filepath.Join(out, runner.WorkspacesDir, "agent")
		assert.Equal(t, "work\nstart\n", git(t, copied, "log", "--format=%s"))
	})
}

// TestCopyReadsTheLFSObjects: a copy of a repository with Git LFS files holds none of
// its LFS objects either, and its git-lfs finds them through the alternates at both
// levels: an earlier version of a file is checked out with its content. What the tools
// write into the copy's LFS store is not the repository's.
func TestCopyReadsTheLFSObjects(t *testing.T) {
	t.Parallel()
	repo := lfsRepo(t)
	store := objectFiles(t, []string{filepath.Join(repo, ".git", "lfs", "objects")})
	kept := map[string]string{}
	for _, p := range store {
		kept[p] = readFile(t, p)
	}
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		cmd := "cat big.bin; echo own: $(find .git/lfs -type f 2>/dev/null | wc -l); git checkout -q HEAD~1 -- big.bin && echo before: $(cat big.bin); " +
			"find .git/lfs -type f -exec sh -c 'echo tampered > \"$1\"' _ {} \\; ; echo done"
		_, _, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s}, workspace: {dir: %q, mode: copy}", level, repo), cmd)
		for _, want := range []string{"the large file's content\n", "own: 0\n", "before: the first content\n"} {
			assert.Contains(t, output, want, "at level %s:\n%s", level, output)
		}
		for p, content := range kept {
			assert.Equal(t, content, readFile(t, p), "ESCAPE: the tools wrote the repository's LFS object %s", p)
		}
	})
}

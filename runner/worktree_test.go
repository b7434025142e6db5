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

// TestWorktreeHasTheLFSFiles: a worktree of a repository whose large files are in Git
// LFS has their content, not their pointers, and its git status is clean at both
// levels: git-lfs finds the objects through the worktree's alternates.
func TestWorktreeHasTheLFSFiles(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		repo := lfsRepo(t)
		store := objectFiles(t, []string{filepath.Join(repo, ".git", "lfs", "objects")})
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

// TestWorktreeChecksOutTheSubmodules: a worktree of a repository whose submodules are
// checked out has them too, at the commits its tree records, and their git works in
// the sandbox at both levels: git worktree add left them empty. A submodule's
// repository stays as it was.
func TestWorktreeChecksOutTheSubmodules(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		lib := newRepo(t, map[string]string{"lib.txt": "the library\n"})
		super := superproject(t, dir, lib, "vendor/lib")
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
	return runBashWith(t, dir, settings, cmd, runner.Options{Environ: os.Environ()})
}

// runBashWith is runBash with the runner's options opts, less its output folder and
// providers, which it sets.
func runBashWith(t *testing.T, dir, settings, cmd string, opts runner.Options) (*runner.Summary, string, string) {
	t.Helper()
	scripts := scriptsWith(t, "agent", fmt.Sprintf("steps:\n  - tool_calls: [{name: Bash, input: {command: %q}}]\n  - text: \"Done.\"\n", cmd))
	out := filepath.Join(dir, "out")
	spec := "version: 1\ndefaults: {tools: [Bash], env: {PATH: /usr/bin:/bin}, " + settings + "}\njobs:\n  - {id: agent, model: agent, prompt: Go.}\n"
	opts.Out, opts.Providers = out, newInProcess(scripts)
	sum, err := newRunner(t, opts).Run(context.Background(), writeSpec(t, dir, spec))
	require.NoError(t, err)
	require.Len(t, sum.Sessions, 1)
	results := toolResults(t, out, "agent")
	require.Len(t, results, 1)
	require.Contains(t, results[0].Content, "done")
	return sum, out, results[0].Content
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

// lfsRepo is a repository whose big.bin is in Git LFS, in two commits: "the first
// content", then "the large file's content". Without git-lfs the test skips, and fails
// where AGENTRUN_REQUIRE_TOOLS is set.
func lfsRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		if os.Getenv("AGENTRUN_REQUIRE_TOOLS") != "" {
			t.Fatal("git-lfs is not installed (apt-get install git-lfs) and AGENTRUN_REQUIRE_TOOLS is set")
		}
		t.Skip("git-lfs is not installed (apt-get install git-lfs)")
	}
	repo := newRepo(t, nil)
	git(t, repo, "lfs", "install", "--local")
	git(t, repo, "lfs", "track", "*.bin")
	for _, content := range []string{"the first content\n", "the large file's content\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(repo, "big.bin"), []byte(content), 0o644))
		git(t, repo, "add", "-A")
		git(t, repo, "commit", "-q", "-m", "large")
	}
	require.Contains(t, git(t, repo, "show", "HEAD:big.bin"), "git-lfs.github.com/spec", "the file is no LFS pointer: the test proves nothing")
	require.Len(t, objectFiles(t, []string{filepath.Join(repo, ".git", "lfs", "objects")}), 2)
	return repo
}

package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGuardedPath(t *testing.T) {
	t.Parallel()
	for rel, want := range map[string]bool{
		"config": true, "config.worktree": true, "commondir": true, "hooks": true, "hooks/pre-commit": true,
		"info/attributes": true, "modules/lib/config": true, "modules/lib/hooks/post-checkout": true,
		"modules/a/modules/b/commondir": true, "worktrees/w/commondir": true, "worktrees/w/config.worktree": true,
		"modules/lib/info/exclude": true, "modules/lib/hooks": true,
		"HEAD": false, "index": false, "objects/ab/cdef": false, "refs/heads/main": false, "packed-refs": false,
		"modules/lib/HEAD": false, "modules/lib/objects/pack/x.pack": false, "worktrees/w/HEAD": false,
		"worktrees/w/gitdir": false, "modules/lib/refs/heads/config": false, "logs/HEAD": false,
	} {
		assert.Equal(t, want, guardedPath(rel), rel)
	}
}

// TestGitGuardRestore: what the tools changed, added, moved or linked in a guarded
// git folder, and a submodule's .git file they rewrote, is put back and nothing else is
// touched; a git folder whose way goes
// through a link the tools made is not written through, and is an error.
func TestGitGuardRestore(t *testing.T) {
	t.Parallel()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	outside := t.TempDir()
	write := func(p, content string, mode os.FileMode) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), mode))
	}
	git := filepath.Join(ws, ".git")
	write(filepath.Join(git, "config"), "[core]\n\tbare = false\n", 0o644)
	write(filepath.Join(git, "HEAD"), "ref: refs/heads/main\n", 0o644)
	write(filepath.Join(git, "hooks", "pre-commit.sample"), "#!/bin/sh\n", 0o755)
	write(filepath.Join(git, "modules", "lib", "config"), "[core]\n", 0o644)
	write(filepath.Join(ws, "lib", ".git"), "gitdir: ../.git/modules/lib\n", 0o644)
	write(filepath.Join(ws, "tools", ".git", "config"), "[core]\n", 0o644)
	g, err := newGitGuard(ws, nestedWorkTrees(ws, ""))
	require.NoError(t, err)
	require.Len(t, g.folders, 2, "the submodule's git folder is the top one's")

	// The tools' changes.
	require.NoError(t, os.Rename(filepath.Join(git, "hooks", "pre-commit.sample"), filepath.Join(git, "hooks", "pre-commit")))
	write(filepath.Join(git, "modules", "lib", "hooks", "post-checkout"), "#!/bin/sh\nevil\n", 0o755)
	require.NoError(t, os.Chmod(filepath.Join(git, "config"), 0o666))
	write(filepath.Join(git, "HEAD"), "ref: refs/heads/other\n", 0o644)
	write(filepath.Join(ws, "lib", ".git"), "gitdir: "+outside+"\n", 0o644)
	write(filepath.Join(outside, "config"), "[core]\n\tfsmonitor = evil\n", 0o644)
	require.NoError(t, os.RemoveAll(filepath.Join(ws, "tools", ".git")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "tools", ".git")))

	changed, err := g.restore()
	require.ErrorIs(t, err, errGitFolderReplaced)
	assert.Contains(t, err.Error(), filepath.Join(ws, "tools", ".git"))
	assert.ElementsMatch(t, []string{filepath.Join(git, "config"), filepath.Join(git, "hooks", "pre-commit"),
		filepath.Join(git, "hooks", "pre-commit.sample"), filepath.Join(git, "modules", "lib", "hooks"), filepath.Join(ws, "lib", ".git")}, changed)
	assert.Equal(t, "gitdir: ../.git/modules/lib\n", readFileString(t, filepath.Join(ws, "lib", ".git")), "the submodule's .git file")
	assert.NoFileExists(t, filepath.Join(git, "hooks", "pre-commit"))
	assert.FileExists(t, filepath.Join(git, "hooks", "pre-commit.sample"))
	assert.NoDirExists(t, filepath.Join(git, "modules", "lib", "hooks"))
	info, err := os.Stat(filepath.Join(git, "config"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	assert.Equal(t, "ref: refs/heads/other\n", readFileString(t, filepath.Join(git, "HEAD")), "HEAD is the session's")
	assert.Equal(t, "[core]\n\tfsmonitor = evil\n", readFileString(t, filepath.Join(outside, "config")), "written through the link")
	entries, err := os.ReadDir(filepath.Join(git, "hooks"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left")

	changed, err = g.restore()
	assert.ErrorIs(t, err, errGitFolderReplaced)
	assert.Empty(t, changed, "all was put back")

	// A work tree that is gone (a worktree removed after its session) gets no .git file.
	require.NoError(t, os.RemoveAll(filepath.Join(ws, "lib")))
	_, err = g.restore()
	assert.ErrorIs(t, err, errGitFolderReplaced)
	assert.NoDirExists(t, filepath.Join(ws, "lib"))
}

func readFileString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

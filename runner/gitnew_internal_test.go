package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkKey(t *testing.T) {
	for key, want := range map[string]bool{
		"core.repositoryformatversion": true, "user.email": true, "remote.origin.url": true,
		"remote.a.b.fetch": true, "branch.main.merge": true, "submodule.vendor/lib.url": true,
		"core.fsmonitor": false, "core.hookspath": false, "core.pager": false, "core.sshcommand": false,
		"alias.st": false, "include.path": false, "includeif.gitdir:/x.path": false, "filter.x.clean": false,
		"remote.origin.uploadpack": false, "submodule.x.update": false, "remote.url": false, "user.signingkey": false,
	} {
		assert.Equal(t, want, workKey(key), key)
	}
}

// TestTameGitDir tames a git folder the tools made: what runs a program goes, from the
// folder and from a submodule's under modules/, and what a repository made for work
// needs stays, with git's sample hooks.
func TestTameGitDir(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	run("init", "-q")
	gitDir := filepath.Join(dir, ".git")
	run("config", "user.email", "a@example.com")
	run("config", "remote.my remote.url", "https://example.com/x.git")
	run("config", "core.fsmonitor", "touch x")
	run("config", "alias.st", "!touch x")
	run("config", "--add", "alias.st", "!touch y")
	run("config", "include.path", "more")
	module := filepath.Join(gitDir, "modules", "vendor", "lib")
	require.NoError(t, os.MkdirAll(filepath.Join(module, "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(module, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(module, "config"), []byte("[core]\n\tfsmonitor = touch x\n\tbare = false\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(module, "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755))
	hooks := filepath.Join(gitDir, "hooks")
	require.NoError(t, os.WriteFile(filepath.Join(hooks, "post-checkout"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.Remove(filepath.Join(hooks, "pre-push.sample")))
	require.NoError(t, os.Symlink("/bin/true", filepath.Join(hooks, "pre-push.sample")))
	require.NoError(t, os.WriteFile(filepath.Join(gitDir, "commondir"), []byte("/elsewhere\n"), 0o644))
	require.FileExists(t, filepath.Join(hooks, "pre-commit.sample"), "git init wrote no sample hooks")

	changed, err := tameGitDir(context.Background(), lookGit(), gitDir)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "commondir"),
		filepath.Join(hooks, "post-checkout"), filepath.Join(hooks, "pre-push.sample"),
		filepath.Join(module, "config"), filepath.Join(module, "hooks", "pre-commit")}, changed)
	entries, err := lookGit().listConfig(context.Background(), filepath.Join(gitDir, "config"))
	require.NoError(t, err)
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.key)
	}
	assert.Contains(t, keys, "user.email")
	assert.Contains(t, keys, "remote.my remote.url")
	for _, k := range keys {
		assert.True(t, workKey(k), k)
	}
	assert.FileExists(t, filepath.Join(hooks, "pre-commit.sample"))
	assert.NoFileExists(t, filepath.Join(gitDir, "commondir"))
	b, err := os.ReadFile(filepath.Join(module, "config"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "fsmonitor")

	again, err := tameGitDir(context.Background(), lookGit(), gitDir)
	require.NoError(t, err)
	assert.Empty(t, again, "a tamed folder has nothing more to take out")
}

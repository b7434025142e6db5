package runner

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/fuzzguard"
)

func requireGit(t *testing.T) gitBin {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	return lookGit()
}

// TestCleanConfig takes the credentials out of the configs of testdata/TestCleanConfig
// and compares what git then reads of each with its want, entry by entry, in any order.
func TestCleanConfig(t *testing.T) {
	t.Parallel()
	g := requireGit(t)
	cases, err := filepath.Glob(filepath.Join("testdata", t.Name(), "*"))
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := filepath.Join(dir, "config")
			s := newConfigScan(g, t.TempDir())
			b, creds, err := s.file(ctx, f)
			require.NoError(t, err)
			clean := b
			if len(creds) > 0 {
				clean, err = g.cleanConfig(ctx, b, s.entries[f], creds)
				require.NoError(t, err)
			}
			out := filepath.Join(t.TempDir(), "config")
			require.NoError(t, os.WriteFile(out, clean, 0o644))
			entries, err := g.listConfig(ctx, out)
			require.NoError(t, err)
			var got []string
			for _, e := range entries {
				got = append(got, e.key+"="+e.value)
			}
			want, err := os.ReadFile(filepath.Join(dir, "want"))
			require.NoError(t, err)
			assert.ElementsMatch(t, strings.Fields(string(want)), got)
			for _, secret := range []string{"secret", "TOKEN123", "eC1hY2Nlc3M", "proxypass", "sshpass", "a-token"} {
				assert.NotContains(t, string(clean), secret)
			}
		})
	}
}

// TestScanCheckout follows a checkout's includes: a file that holds credentials, by
// itself or through an include of its own, is hidden and its include taken out of the
// copy; an include of clean settings stays, a missing one and a cycle are no error.
func TestScanCheckout(t *testing.T) {
	t.Parallel()
	g := requireGit(t)
	dir := t.TempDir()
	repo, home := filepath.Join(dir, "repo"), filepath.Join(dir, "home")
	write := func(p, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	creds := filepath.Join(dir, "temp", "git-credentials-1.config")
	write(creds, "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n")
	write(filepath.Join(home, "outer.config"), "[include]\n\tpath = ../temp/git-credentials-1.config\n")
	write(filepath.Join(dir, "clean.config"), "[core]\n\tabbrev = 12\n[include]\n\tpath = "+filepath.Join(dir, "clean.config")+"\n")
	write(filepath.Join(repo, ".git", "config"), "[core]\n\tbare = false\n"+
		"[includeIf \"gitdir:"+repo+"/.git\"]\n\tpath = "+creds+"\n"+
		"[include]\n\tpath = ~/outer.config\n\tpath = ../../clean.config\n\tpath = /nowhere/missing.config\n")
	write(filepath.Join(repo, ".git", "modules", "lib", "config"), "[remote \"origin\"]\n\turl = https://TOKEN@github.com/o/lib\n")
	write(filepath.Join(repo, ".git", "modules", "lib", "objects", "config"), "not a config, never read")

	c, err := g.scanCheckout(context.Background(), repo, "", home)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(home, "outer.config"), creds}, c.hide)
	main, lib := filepath.Join(repo, ".git", "config"), filepath.Join(repo, ".git", "modules", "lib", "config")
	assert.ElementsMatch(t, []string{main, lib}, slices.Collect(func(yield func(string) bool) {
		for p := range c.clean {
			if !yield(p) {
				return
			}
		}
	}))
	assert.Equal(t, "[core]\n\tbare = false\n[include]\n\tpath = ../../clean.config\n\tpath = /nowhere/missing.config\n", string(c.clean[main]))
	assert.Equal(t, []string{"include.path", "includeif.gitdir:" + repo + "/.git.path"}, c.keys[main])
	assert.Contains(t, string(c.clean[lib]), "url = https://github.com/o/lib")

	hide, refused := c.forTools(true)
	assert.Equal(t, append(slices.Clone(c.hide), main, lib), hide, "a copy has the clean configs; the originals are hidden")
	assert.NoError(t, refused)
	hide, refused = c.forTools(false)
	assert.Equal(t, c.hide, hide)
	require.ErrorIs(t, refused, ErrSandbox)
	assert.Contains(t, refused.Error(), main+" (include.path, includeif.gitdir:"+repo+"/.git.path)")
	assert.NotContains(t, refused.Error(), "TOKEN")

	none, err := g.scanCheckout(context.Background(), t.TempDir(), "", home)
	require.NoError(t, err)
	hide, refused = none.forTools(false)
	assert.Empty(t, hide, "no repository, nothing to hide")
	assert.NoError(t, refused)
}

func TestWithoutUser(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ give, want string }{
		"user and token":         {"https://x-access-token:ghs_1@github.com/o/r", "https://github.com/o/r"},
		"token as the user":      {"https://ghp_2@github.com/o/r", "https://github.com/o/r"},
		"no user":                {"https://github.com/o/r", ""},
		"an at sign in the path": {"https://github.com/o/r@v1", ""},
		"ssh user kept":          {"ssh://git@github.com/o/r", ""},
		"ssh password":           {"ssh://git:pw@github.com/o/r", "ssh://git@github.com/o/r"},
		"scp form":               {"git@github.com:o/r.git", ""},
		"proxy":                  {"http://u:p@proxy:3128", "http://proxy:3128"},
		"not at the start":       {"hasconfig:remote.*.url:https://t@h/**", ""},
		"an email":               {"ci@example.com", ""},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := withoutUser(c.give)
			if c.want == "" {
				assert.False(t, ok)
				assert.Equal(t, c.give, got)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, c.want, got)
		})
	}
}

// FuzzWithoutUser: a URL loses its user information once, and what is left has none.
func FuzzWithoutUser(f *testing.F) {
	for _, s := range []string{"https://a:b@h/p", "ssh://u:p@h", "https://h/@", "x://@", "git@h:p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzguard.Run(len(s), func() {
			clean, ok := withoutUser(s)
			if !ok {
				assert.Equal(t, s, clean)
				return
			}
			assert.Less(t, len(clean), len(s))
			again, ok := withoutUser(clean)
			if ok { // only an ssh URL keeps a user, and it has no password left
				assert.Equal(t, clean, again, "%q", s)
			}
		})
	})
}

// FuzzParseConfigList: every NUL-terminated record is one entry, split at its first
// newline.
func FuzzParseConfigList(f *testing.F) {
	f.Add([]byte("core.bare\nfalse\x00user.name\nCI\x00core.flag\x00"))
	f.Add([]byte("a.b\n\n\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzguard.Run(len(b), func() {
			entries := parseConfigList(b)
			var records int
			for r := range strings.SplitSeq(string(b), "\x00") {
				if r != "" {
					records++
				}
			}
			require.Len(t, entries, records)
			for _, e := range entries {
				assert.NotContains(t, e.key, "\n")
				assert.NotContains(t, e.key+e.value, "\x00")
			}
		})
	})
}

// TestScanCheckoutOfAWorktree: a workspace that is a worktree of a repository elsewhere
// reads that repository's config; a copy of it holds none of it, so the config is
// hidden from the copy's tools instead.
func TestScanCheckoutOfAWorktree(t *testing.T) {
	t.Parallel()
	g := requireGit(t)
	ctx := context.Background()
	dir := t.TempDir()
	repo, wt := filepath.Join(dir, "repo"), filepath.Join(dir, "wt")
	for _, args := range [][]string{
		{"init", "-q", repo},
		{"-C", repo, "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-q", "--allow-empty", "-m", "start"},
		{"-C", repo, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0"},
		{"-C", repo, "worktree", "add", "-q", "--detach", wt},
	} {
		_, err := g.quiet(ctx, args...)
		require.NoError(t, err, "git %v", args)
	}
	c, err := g.scanCheckout(ctx, wt, "", t.TempDir())
	require.NoError(t, err)
	main := filepath.Join(repo, ".git", "config")
	require.Contains(t, c.clean, main)
	hide, refused := c.forTools(true)
	require.NoError(t, refused)
	assert.Contains(t, hide, main, "the copy's .git file still names the repository's git folder")
}

// TestScanCheckoutOfAFolder: a workspace that is a folder of a checkout, or holds
// another checkout a few folders down, has those repositories' configs scanned too:
// the tools may read the enclosing checkout, and a copy holds the nested one.
func TestScanCheckoutOfAFolder(t *testing.T) {
	t.Parallel()
	g := requireGit(t)
	ctx := context.Background()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	sub, nested, deep := filepath.Join(repo, "sub"), filepath.Join(repo, "a", "b", "tools"), filepath.Join(repo, "a", "b", "c", "d")
	for _, args := range [][]string{
		{"init", "-q", repo}, {"init", "-q", nested}, {"init", "-q", deep},
		{"-C", repo, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0"},
		{"-C", nested, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic bmVzdGVk"},
		{"-C", deep, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic ZGVlcA=="},
	} {
		_, err := g.quiet(ctx, args...)
		require.NoError(t, err, "git %v", args)
	}
	require.NoError(t, os.MkdirAll(sub, 0o755))
	outer, inner := filepath.Join(repo, ".git", "config"), filepath.Join(nested, ".git", "config")

	c, err := g.scanCheckout(ctx, sub, "", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, []string{outer}, slices.Sorted(maps.Keys(c.clean)), "the checkout that holds the workspace")

	c, err = g.scanCheckout(ctx, repo, "", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, []string{outer, inner}, slices.Sorted(maps.Keys(c.clean)),
		"a repository nestedDepth folders down is found; one deeper is not looked for")
}

// TestCleanOfByAnyName: the clean content of a config that holds credentials is found
// by any name of the file, as git names it (a worktree's config, through a link on the
// way that the scan did not take); another file has none.
func TestCleanOfByAnyName(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cfg := filepath.Join(dir, "repo", ".git", "config")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o755))
	require.NoError(t, os.WriteFile(cfg, []byte("[core]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "repo", ".git", "other"), []byte("[core]\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(dir, "repo"), filepath.Join(dir, "link")))
	c := &checkoutCreds{clean: map[string][]byte{cfg: []byte("clean")}}
	for name, path := range map[string]string{"its own": cfg, "through a link": filepath.Join(dir, "link", ".git", "config")} {
		b, ok := c.cleanOf(path)
		assert.True(t, ok, name)
		assert.Equal(t, "clean", string(b), name)
	}
	_, ok := c.cleanOf(filepath.Join(dir, "link", ".git", "other"))
	assert.False(t, ok)
	_, ok = c.cleanOf(filepath.Join(dir, "missing"))
	assert.False(t, ok)
}

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHiddenResolvesLinks: a hidden path whose folder is reached through a symbolic link,
// or which is a link itself, is hidden by each name the host gives it.
func TestHiddenResolvesLinks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(root, "var", "home")
	keys := filepath.Join(root, "keys")
	for _, d := range []string{real, keys} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	home := filepath.Join(root, "home")
	require.NoError(t, os.Symlink(real, home))
	require.NoError(t, os.Symlink(keys, filepath.Join(real, ".ssh")))
	out := filepath.Join(root, "out")
	require.NoError(t, os.Symlink(real, out))

	for _, tc := range []struct {
		name  string
		mode  Mode
		extra []string
		want  []string
	}{
		{name: "the home's stores by the link, by the folder and where a store leads",
			want: []string{filepath.Join(home, ".ssh"), filepath.Join(real, ".ssh"), keys, filepath.Join(real, ".aws")}},
		{name: "the runner's own folder by the link", mode: Mode{System: PermRead}, extra: []string{filepath.Join(out, "sessions")},
			want: []string{filepath.Join(out, "sessions"), filepath.Join(real, "sessions")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Spec{Mode: tc.mode, Home: home}.Hidden(tc.extra...)
			for _, w := range tc.want {
				assert.Contains(t, got, w)
			}
			if tc.mode.System.Has(PermRead) {
				assert.NotContains(t, got, filepath.Join(real, ".ssh"), "the system read bit shows the stores")
			}
		})
	}
}

// TestHiddenKeepsOwnFolders: a root-only path that is in, is, or holds one of the
// session's own folders (its home, its workspace, a path of its spec) is not hidden
// whole; what it holds that is root-only in its own right still is, as is the rest,
// and the home's credential stores are hidden as such.
func TestHiddenKeepsOwnFolders(t *testing.T) {
	s := Spec{Home: "/root", Workspace: "/data/private/ws", Readable: []string{"/srv/models"},
		RootOnly: []string{"/root", "/root/.config", "/data/private", "/srv", "/home/bob", "/home/amy/.ssh",
			"/data/private/ws-other", "/data/private/ws/.env", "/etc/k"}}
	hidden := s.Hidden()
	for _, p := range []string{"/home/bob", "/home/amy/.ssh", "/data/private/ws-other", "/etc/k", "/etc/shadow", "/root/.ssh"} {
		assert.Contains(t, hidden, p)
	}
	for _, p := range []string{"/root", "/root/.config", "/data/private", "/srv", "/data/private/ws/.env"} {
		assert.NotContains(t, hidden, p)
	}
	s.Mode.System = PermRead
	assert.NotContains(t, s.Hidden(), "/home/bob", "the system read bit shows the machine's credentials")
}

// BenchmarkHidden is what the runner computes for every session: the hidden paths of a
// spec whose home is this machine's.
func BenchmarkHidden(b *testing.B) {
	home, err := os.UserHomeDir()
	if err != nil {
		b.Skip(err)
	}
	s := Spec{Home: home, Workspace: b.TempDir()}
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Hidden("/tmp/agentrun-out")
	}
}

// TestResolvedDir: a folder resolved by way of its parents' resolved forms is what
// EvalSymlinks makes of it, "" where that fails: through links absolute and relative,
// a chain of them, one that leads nowhere, and folders that are not there.
func TestResolvedDir(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"real/a/b", "other"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for link, target := range map[string]string{"abs": filepath.Join(root, "real"), "real/a/rel": "../../other",
		"chain": "abs", "nowhere": filepath.Join(root, "missing"), "real/a/b/up": ".."} {
		require.NoError(t, os.Symlink(target, filepath.Join(root, link)))
	}
	dirs := map[string]string{}
	for _, d := range []string{"real/a/b", "abs/a/b", "chain/a/rel", "abs/a/rel/x", "nowhere/x", "missing/y", "real/a/b/up/b/up", "chain"} {
		p := filepath.Join(root, d)
		want, err := filepath.EvalSymlinks(p)
		if err != nil {
			want = ""
		}
		assert.Equal(t, want, resolvedDir(p, dirs), d)
	}
}

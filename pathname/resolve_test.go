package pathname

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReal(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a/b"), 0o755))
	require.NoError(t, os.Symlink("a/b", filepath.Join(dir, "rel")))
	require.NoError(t, os.Symlink("/nonexistent/target", filepath.Join(dir, "dangling")))
	require.NoError(t, os.Symlink("loop2", filepath.Join(dir, "loop1")))
	require.NoError(t, os.Symlink("loop1", filepath.Join(dir, "loop2")))
	tests := map[string]string{
		filepath.Join(dir, "rel/x"):    filepath.Join(dir, "a/b/x"),
		dir + "/rel/../c":              filepath.Join(dir, "a/c"),
		filepath.Join(dir, "dangling"): "/nonexistent/target",
		dir + "/missing/x/../y":        filepath.Join(dir, "missing/y"),
		"/":                            "/",
	}
	for give, want := range tests {
		assert.Equal(t, want, Real(give), give)
	}
	assert.NotPanics(t, func() { Real(filepath.Join(dir, "loop1", "x")) })
}

func TestWithin(t *testing.T) {
	tests := []struct {
		dir, p string
		want   bool
	}{
		{"/a", "/a", true},
		{"/a", "/a/b", true},
		{"/a", "/ab", false},
		{"/", "/x", true},
		{"", "/x", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Within(tt.dir, tt.p), "%s in %s", tt.p, tt.dir)
	}
}

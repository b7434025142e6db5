package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/testexit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit)) }

// tempDir is t.TempDir with symbolic links resolved, as Dirs.Workspace is.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// newDirs returns Dirs with a fresh workspace and home directory.
func newDirs(t testing.TB) Dirs {
	t.Helper()
	return NewDirs(tempDir(t), tempDir(t))
}

// mustParse parses a mode that the test knows to be valid.
func mustParse(t testing.TB, mode string) Policy {
	t.Helper()
	p, err := Parse(mode)
	require.NoError(t, err)
	return p
}

// writeTree creates files (relative path → content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

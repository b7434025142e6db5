package runner_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
)

// TestFileModes checks that everything a run writes is readable by other users (files
// 0644, folders 0755, less the umask), so that a runner user or a test-report action
// can read what a container of another uid wrote.
func TestFileModes(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		umask     int
		file, dir fs.FileMode
	}{
		"umask 022": {umask: 0o022, file: 0o644, dir: 0o755},
		"umask 027": {umask: 0o027, file: 0o640, dir: 0o750},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			old := syscall.Umask(tt.umask) // the process's umask: these subtests do not run in parallel
			defer syscall.Umask(old)
			spec := writeSpec(t, t.TempDir(), mixedSpec(false))
			out := filepath.Join(t.TempDir(), "out")
			p := newInProcess(loadScripts(t))
			p.fakes["crash"] = panicking("provider exploded")
			_, err := newRunner(t, mixedOptions(out, p)).Run(context.Background(), spec)
			require.NoError(t, err)
			files := 0
			require.NoError(t, filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				if rel, _ := filepath.Rel(out, path); rel == runner.WorkspacesDir || strings.HasPrefix(rel, runner.WorkspacesDir+"/") {
					return nil // the workspaces hold what the model and the spec's files made
				}
				info, err := d.Info()
				require.NoError(t, err)
				want := tt.file
				if d.IsDir() {
					want = tt.dir
				}
				files++
				assert.Equal(t, want, info.Mode().Perm(), "%s", path)
				return nil
			}))
			assert.Greater(t, files, 20)
		})
	}
}

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunTempRemovesKilledRuns: a run's folder of TMPDIRs that no run holds any more (a
// killed run's, with a session's file in it) is removed by the next run; a live run's,
// and what is not a run's, stay.
func TestRunTempRemovesKilledRuns(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	stale := filepath.Join(parent, runTempPrefix+"killed")
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "agentrun-tmp-1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(stale, "agentrun-tmp-1", "answer.txt"), []byte("x"), 0o644))
	other := filepath.Join(parent, "unrelated")
	require.NoError(t, os.Mkdir(other, 0o755))

	live, err := newRunTemp(parent)
	require.NoError(t, err)
	assert.NoDirExists(t, stale, "the killed run's folder stays")
	next, err := newRunTemp(parent)
	require.NoError(t, err)
	assert.DirExists(t, live.dir, "the next run removed a live run's folder")
	assert.DirExists(t, other)
	assert.NotEqual(t, live.dir, next.dir)
	for _, d := range []string{live.dir, next.dir} {
		assert.True(t, strings.HasPrefix(filepath.Base(d), runTempPrefix), d)
	}
	require.NoError(t, live.remove())
	require.NoError(t, next.remove())
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "unrelated", entries[0].Name())
}

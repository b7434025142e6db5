package jobs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExamples parses every spec in ../examples, so that the examples cannot rot.
// Every ${VAR} is taken as set, as it is in the CI jobs the examples are written for.
func TestExamples(t *testing.T) {
	const dir = "../examples"
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		t.Skip("no examples directory yet")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join(dir, "*.yml"))
	require.NoError(t, err)
	files = append(files, more...)
	require.NotEmpty(t, files, "the examples directory has no YAML files")
	set := func(string) (string, bool) { return "example", true }
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, err := Load(file, set)
			require.NoError(t, err)
			sessions, err := s.Sessions()
			require.NoError(t, err)
			assert.NotEmpty(t, sessions)
		})
	}
}

package examples_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/jobs"
)

// checkTools are tools the examples' checks run; a check must fail when its tool is
// missing, never pass because a command substitution printed nothing.
var checkTools = []string{"gofmt", "go", "grep"}

// TestChecksFailWithoutTheirTool runs every check of every example spec that uses one
// of checkTools in an empty folder with an empty PATH, where none of them exists: each
// must fail.
func TestChecksFailWithoutTheirTool(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	files, err := filepath.Glob("*.yaml")
	require.NoError(t, err)
	tried := 0
	for _, file := range files {
		spec, err := jobs.Load(file, func(string) (string, bool) { return "", false })
		require.NoError(t, err)
		sessions, err := spec.Sessions()
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, s := range sessions {
			for _, c := range s.Checks {
				if seen[c.Run] || !usesTool(c.Run) {
					continue
				}
				seen[c.Run] = true
				tried++
				t.Run(file+" "+c.Name, func(t *testing.T) {
					t.Parallel()
					cmd := exec.Command(bash, "-c", c.Run)
					cmd.Dir = t.TempDir()
					cmd.Env = []string{"PATH=" + t.TempDir()}
					out, err := cmd.CombinedOutput()
					assert.Error(t, err, "%q passed without its tool: %s", c.Run, out)
				})
			}
		}
	}
	assert.Positive(t, tried, "the examples have checks that need a tool")
}

// usesTool reports whether a shell command names one of checkTools as a word.
func usesTool(run string) bool {
	for _, w := range strings.FieldsFunc(run, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '_'
	}) {
		for _, tool := range checkTools {
			if w == tool {
				return true
			}
		}
	}
	return false
}

package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/transport/scripted"
)

// TestPrimingCopyWorkspaces runs four sessions of one job, each in a copy of the
// workspace of its own (the default mode), against the scripted model with Anthropic's
// prompt cache modelled. Their system prompts differ only in the workspace path, which
// sits after the cache breakpoint, so the sessions form one priming group: one writes
// the shared prefix and the other three read it.
func TestPrimingCopyWorkspaces(t *testing.T) {
	t.Parallel()
	script, err := scripted.ParseScript("prime", []byte("steps:\n  - text: Done.\n"))
	require.NoError(t, err)
	p := newOverHTTPWith(t, scripted.Options{Default: script, PromptCache: scripted.PromptCache{TTL: 5 * time.Minute}})
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "repo"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "repo", "main.go"), []byte("package main\n"), 0o644))
	extra := strings.Repeat("Follow the house style of the repository in every change. ", 100)
	spec := writeSpec(t, dir, fmt.Sprintf(`version: 1
concurrency: 4
defaults:
  tools: []
  workspace: {dir: repo, mode: copy}
jobs:
  - {id: task, model: claude-sonnet-4-6, repeat: 4, system: %q, prompt: "Task {{ .repeat }}: answer briefly."}
`, extra))
	sum, err := newRunner(t, runner.Options{Out: filepath.Join(dir, "out"), Providers: p}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Equal(t, 4, sum.Totals.Passed)
	var readers, writers int
	for _, row := range sum.Sessions {
		switch {
		case row.Usage.CacheRead > int64(len(extra)/4):
			readers++
		case row.Usage.CacheCreation > int64(len(extra)/4):
			writers++
		}
	}
	assert.Equal(t, 1, writers, "one session writes the shared prefix")
	assert.Equal(t, 3, readers, "the others read it, though each has a workspace of its own")
}

package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
)

// TestSessionFolderFiles checks that a finished session folder holds the five files a
// session always leaves and nothing more: no counters file (result.json has them), no
// temporary file; and that the worker of a session starts only for its first tool call,
// so a session that calls none never starts one.
func TestSessionFolderFiles(t *testing.T) {
	t.Parallel()
	requireLevel(t, sandbox.LevelStrict)
	dir := t.TempDir()
	spec := writeSpec(t, dir, `version: 1
defaults: {sandbox: {level: strict}, workspace: {dir: ., mode: copy}}
jobs:
  - {id: tool, model: success, prompt: Write the notes.}
  - {id: answer, model: answer, prompt: Say so.}
`)
	out := filepath.Join(dir, "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t))}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Equal(t, 2, sum.Totals.Passed, sum.Text())
	verifyOut(t, out, sum)
	for _, tt := range []struct {
		key     string
		started bool
	}{
		{"tool", true},
		{"answer", false},
	} {
		t.Run(tt.key, func(t *testing.T) {
			sdir := filepath.Join(out, runner.SessionsDir, tt.key)
			entries, err := os.ReadDir(sdir)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			assert.ElementsMatch(t, []string{runner.StreamFile, runner.EventsFile, runner.TranscriptFile,
				runner.MessagesFile, runner.ResultFile}, names)
			var res protocol.Result
			b, err := os.ReadFile(filepath.Join(sdir, runner.ResultFile))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &res))
			require.NotNil(t, res.Sandbox)
			assert.Equal(t, "strict", res.Sandbox.Level)
			if tt.started {
				assert.NotEmpty(t, res.Sandbox.Layers, "the tool call started the worker")
			} else {
				assert.Empty(t, res.Sandbox.Layers, "no tool call, no worker")
			}
		})
	}
}

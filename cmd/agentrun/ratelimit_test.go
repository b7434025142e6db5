package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFakeServerRateLimit runs sessions against a fake server with a rate limit of ten
// requests a second, two at a time: the run is paced by the server's rate-limit
// headers, and its summary says for how long.
func TestFakeServerRateLimit(t *testing.T) {
	url := startFakeServer(t, nil, "--rpm", "600", "--rate-window", "200ms")
	spec := specDir(t, `version: 1
concurrency: 6
defaults: {script: steps.yaml, workspace: {dir: ws, mode: copy}}
jobs:
  - {id: look, prompt: Look at the note., repeat: 6}
`)
	out := filepath.Join(filepath.Dir(spec), "out")
	o := agentrun(t, invocation{args: []string{"run", spec, "--out", out},
		env: baseEnv(t, "ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY=test")})
	require.Equal(t, 0, o.code, o.stderr)
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	require.NoError(t, err)
	var sum struct {
		Totals struct {
			PacedMS int64 `json:"paced_ms"`
		} `json:"totals"`
	}
	require.NoError(t, json.Unmarshal(b, &sum))
	assert.Positive(t, sum.Totals.PacedMS, "totals.paced_ms")
	md, err := os.ReadFile(filepath.Join(out, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "Requests were paced for")
}

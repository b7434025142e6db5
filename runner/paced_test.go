package runner_test

import (
	"context"
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

// TestRunPacedByRateLimits runs eight sessions against an endpoint that allows ten
// requests a second, two at a time, and says so in its rate-limit headers: the shared
// limiter paces the requests, and the summary says for how long.
func TestRunPacedByRateLimits(t *testing.T) {
	p := newOverHTTPWith(t, scripted.Options{RateLimit: scripted.RateLimit{RequestsPerMinute: 600, Window: 200 * time.Millisecond}})
	spec := writeSpec(t, t.TempDir(), `version: 1
concurrency: 8
defaults: {max_turns: 1, timeout: 30s, idle_timeout: 30s}
jobs:
  - {id: paced, model: paced, repeat: 8, prompt: Say hello.}
`)
	out := filepath.Join(t.TempDir(), "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: p, Throttled: p.Throttled, Paced: p.Paced,
		Environ: []string{"PATH=" + os.Getenv("PATH")}}).Run(context.Background(), spec)
	require.NoError(t, err)
	assert.Equal(t, 8, sum.Totals.Sessions)
	assert.Positive(t, sum.Totals.PacedMS, "totals.paced_ms")
	md, err := os.ReadFile(filepath.Join(out, runner.SummaryMDFile))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(md), "Requests were paced for"), "summary.md says so:\n%s", md)
}

package runner_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/transport/scripted"
)

// TestOutageStatus answers every request 529 with a retry-after longer than the idle
// timeout, 20 sessions at once over loopback HTTP: waiting on the shared limiter or on
// a backoff is never inactivity, and whatever a session's status, its error event says
// what its result says, and a session with no completed turn reports 0 turns and a
// cost of 0.
func TestOutageStatus(t *testing.T) {
	t.Parallel()
	script, err := scripted.ParseScript("outage.yaml", []byte("steps:\n  - text: never\n    fault: {status: 529, retry_after_ms: 2000, times: 1000}\n"))
	require.NoError(t, err)
	p := newOverHTTP(t, map[string]*scripted.Script{"outage": script})
	spec := writeSpec(t, t.TempDir(), `version: 1
concurrency: 20
defaults:
  provider: anthropic
  model: outage
  tools: []
  idle_timeout: 1500ms
  sandbox: {level: "off"}
jobs:
  - {id: down, prompt: go, repeat: 20}
`)
	out := filepath.Join(t.TempDir(), "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: p}).Run(context.Background(), spec)
	require.NoError(t, err)
	results := verifyOut(t, out, sum)
	require.Len(t, results, 20)
	for key, res := range results {
		// The retry-after (2 s) is longer than the idle timeout (1.5 s): only the waits
		// on the backoff and the limiter can be that long, and they never count. An
		// attempt's own bound (half the idle timeout, 750 ms) is the slack for one
		// loopback round trip on a loaded machine.
		assert.Equal(t, protocol.StatusProvider, res.Status, "%s: %+v", key, res.Error)
		require.NotNil(t, res.Error, key)
		assert.Zero(t, res.NumTurns, "%s: no turn completed", key)
		if assert.NotNil(t, res.TotalCostUSD, "%s: the cost is a number", key) {
			assert.Zero(t, *res.TotalCostUSD, "%s: nothing was spent", key)
		}
		var errs []protocol.Error
		for _, m := range readEvents(t, filepath.Join(out, "sessions", key, "events.jsonl"), true) {
			if m.Kind == protocol.KindError {
				errs = append(errs, m.Err)
			}
		}
		assert.Equal(t, []protocol.Error{*res.Error}, errs, "%s: the error event is the result's error", key)
	}
}

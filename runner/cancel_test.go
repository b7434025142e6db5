package runner_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
)

// runResult is what Run returned, for a run started in a goroutine.
type runResult struct {
	sum *runner.Summary
	err error
}

// startRun runs spec in a goroutine owned by the test; the returned channel yields
// the outcome once.
func startRun(ctx context.Context, r *runner.Runner, spec *jobs.Spec) <-chan runResult {
	done := make(chan runResult, 1)
	go func() {
		sum, err := r.Run(ctx, spec)
		done <- runResult{sum, err}
	}()
	return done
}

// cancelBound is how long an interrupted run may take to write every result and its
// summaries (GitHub Actions allows about 10 s between SIGTERM and SIGKILL). It is a
// bound on behaviour, not a speed target.
const cancelBound = 5 * time.Second

func TestRunCancelWithManySessionsRunning(t *testing.T) {
	t.Parallel()
	const running, total = 100, 120
	p := newInProcess(loadScripts(t))
	p.firstByte["slow"] = time.Hour
	reached := p.calls.notifyAt(running)
	spec := writeSpec(t, t.TempDir(), `version: 1
concurrency: 100
defaults: {tools: [Read, Write], timeout: 1h, idle_timeout: 1h}
jobs:
  - {id: slow, model: slow, repeat: 120, prompt: Take your time.}
`)
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := startRun(ctx, newRunner(t, runner.Options{Out: out, Providers: p}), spec)

	select {
	case <-reached:
	case res := <-done:
		t.Fatalf("the run ended before %d sessions were running: %v", running, res.err)
	}
	cancelled := time.Now()
	cancel()
	res := <-done
	elapsed := time.Since(cancelled)

	require.NoError(t, res.err)
	t.Logf("cancel to return: %s", elapsed)
	assert.Less(t, elapsed, cancelBound, "every session cancelled and the summaries written")
	results := verifyOut(t, out, res.sum)
	require.Len(t, results, total)
	for key, r := range results {
		assert.Equal(t, protocol.StatusCancelled, r.Status, key)
		if assert.NotNil(t, r.Error, key) {
			assert.Equal(t, protocol.ErrCancelled, r.Error.Kind, key)
		}
	}
	assert.Equal(t, running, len(p.calls.keys()), "the sessions that never started were not started after the cancel")
	assert.Equal(t, total, res.sum.Totals.ByStatus[protocol.StatusCancelled])
	assert.Equal(t, 130, res.sum.ExitCode(true))
}

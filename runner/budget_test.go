package runner_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
)

func TestRunLevelBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec string
		want map[string]protocol.Status
		// started are the sessions that got a provider.
		started []string
	}{
		{
			name: "admission refused",
			// A session that may cost up to $1.50 never fits a $1.00 run; the session
			// without a cap is estimated at the mean of those finished (none: $0).
			spec: `version: 1
budget: {max_cost_usd: 1.0}
defaults: {tools: [Write]}
jobs:
  - {id: a-free, model: success, prompt: Write.}
  - {id: b-capped, model: success, budget: {max_cost_usd: 1.5}, repeat: 2, prompt: Write.}
`,
			want: map[string]protocol.Status{
				"a-free": protocol.StatusSuccess, "b-capped.r1": protocol.StatusBudget, "b-capped.r2": protocol.StatusBudget,
			},
			started: []string{"a-free"},
		},
		{
			name: "exhausted mid-run",
			// The first call costs $2.00 of a $1.00 run: the run stops that session and
			// starts no other.
			spec: `version: 1
concurrency: 1
budget: {max_cost_usd: 1.0}
prices: {budget: {input: 1000, output: 1000}}
defaults: {tools: [Write]}
jobs:
  - {id: spend, model: budget, repeat: 3, prompt: Spend.}
`,
			want: map[string]protocol.Status{
				"spend.r1": protocol.StatusBudget, "spend.r2": protocol.StatusBudget, "spend.r3": protocol.StatusBudget,
			},
			started: []string{"spend.r1"},
		},
	}
	scripts := loadScripts(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newInProcess(scripts)
			out := filepath.Join(t.TempDir(), "out")
			sum, err := newRunner(t, runner.Options{Out: out, Providers: p}).Run(context.Background(), writeSpec(t, t.TempDir(), tt.spec))
			require.NoError(t, err)
			results := verifyOut(t, out, sum)
			require.Len(t, results, len(tt.want))
			for key, status := range tt.want {
				assert.Equal(t, status, results[key].Status, "%s: %+v", key, results[key].Error)
				if status == protocol.StatusBudget {
					assert.Equal(t, protocol.ErrBudget, results[key].Error.Kind, key)
				}
			}
			var started []string
			for key := range p.calls.keys() {
				started = append(started, key)
			}
			assert.ElementsMatch(t, tt.started, started)
			assert.True(t, sum.Totals.BudgetExhausted)
			assert.Equal(t, 4, sum.ExitCode(false), "exit code 4: the run-level budget ran out")
			assert.Equal(t, 130, sum.ExitCode(true), "an interrupt wins")
		})
	}
}

func TestSummaryExitCode(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give        runner.Totals
		interrupted bool
		want        int
	}{
		"all passed":          {give: runner.Totals{Sessions: 3, Passed: 3}, want: 0},
		"nothing selected":    {give: runner.Totals{}, want: 0},
		"one failed":          {give: runner.Totals{Sessions: 3, Passed: 2, Failed: 1}, want: 1},
		"budget exhausted":    {give: runner.Totals{Sessions: 3, Passed: 2, Failed: 1, BudgetExhausted: true}, want: 4},
		"interrupted":         {give: runner.Totals{Sessions: 3, Passed: 3}, interrupted: true, want: 130},
		"interrupted, budget": {give: runner.Totals{Sessions: 3, Failed: 3, BudgetExhausted: true}, interrupted: true, want: 130},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s := &runner.Summary{Totals: tt.give}
			assert.Equal(t, tt.want, s.ExitCode(tt.interrupted))
		})
	}
}

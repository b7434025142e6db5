package runner_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
)

// TestResultCost checks that a result's cost is a number, 0 when nothing was spent,
// and null only when some usage was of a model with no price.
func TestResultCost(t *testing.T) {
	t.Parallel()
	auth := &protocol.Error{Kind: protocol.ErrAuth, Message: "HTTP 401"}
	tests := map[string]struct {
		out  agent.Outcome
		want any // float64, or nil for null
	}{
		"completed":                {out: agent.Outcome{End: agent.EndCompleted, CompletedTurns: 2, CostUSD: 0.25, CostKnown: true}, want: 0.25},
		"failed before any turn":   {out: agent.Outcome{End: agent.EndProvider, Err: auth, CostKnown: true}, want: 0.0},
		"a failed call's usage":    {out: agent.Outcome{End: agent.EndProvider, Err: auth, CostUSD: 0.01, CostKnown: true}, want: 0.01},
		"a model with no price":    {out: agent.Outcome{End: agent.EndCompleted, CompletedTurns: 1, CostKnown: false}},
		"no price and no turn yet": {out: agent.Outcome{End: agent.EndProvider, Err: auth, CostKnown: false}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			res := runner.ResultOf(context.Background(), tt.out)
			if tt.want == nil {
				assert.Nil(t, res.TotalCostUSD)
				return
			}
			if assert.NotNil(t, res.TotalCostUSD) {
				assert.InDelta(t, tt.want, *res.TotalCostUSD, 1e-12)
			}
		})
	}
}

package runner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/runner"
)

func TestPassAtK(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		n, c, k int
		want    float64
	}{
		"all fail":             {n: 3, c: 0, k: 1, want: 0},
		"all pass":             {n: 3, c: 3, k: 1, want: 1},
		"one of three, k=1":    {n: 3, c: 1, k: 1, want: 1.0 / 3},
		"one of three, k=2":    {n: 3, c: 1, k: 2, want: 2.0 / 3},
		"one of three, k=3":    {n: 3, c: 1, k: 3, want: 1},
		"two of five, k=2":     {n: 5, c: 2, k: 2, want: 0.7}, // 1 - C(3,2)/C(5,2) = 1 - 3/10
		"k=1 is the pass rate": {n: 10, c: 7, k: 1, want: 0.7},
		"few failures":         {n: 4, c: 3, k: 2, want: 1}, // n-c < k: every draw of 2 has a pass
		"large n stays exact":  {n: 200, c: 1, k: 100, want: 0.5},
		"k above n":            {n: 2, c: 1, k: 3, want: 0},
		"k zero":               {n: 2, c: 1, k: 0, want: 0},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.InDelta(t, tt.want, runner.PassAtK(tt.n, tt.c, tt.k), 1e-12)
		})
	}
}

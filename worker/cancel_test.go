package worker_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// TestCancelEndsTheCall checks that a cancelled call comes back as soon as its process
// group is gone, and that the client then works again, at every level.
func TestCancelEndsTheCall(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a kill grace (not with -short)")
	}
	t.Parallel()
	for _, level := range sandbox.Levels {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel()
			c, _ := newClient(t, level, "0467")
			in, err := json.Marshal(map[string]string{"command": "sleep 30 & sleep 60"})
			require.NoError(t, err)
			_, _ = bash(t, c, "true") // the worker runs before the clock starts
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(300*time.Millisecond, cancel)
			start := time.Now()
			r := c.RunTool(ctx, "Bash", in)
			assert.Less(t, time.Since(start), 4*time.Second, "the cancel ended the call: %s", r.Content)
			out, isErr := bash(t, c, "echo again")
			assert.False(t, isErr, out)
			assert.Contains(t, out, "again")
		})
	}
}

package worker

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// TestSignalGuard: the seccomp filter guards the worker's ancestors from the tools'
// signals at level landlock before Landlock scopes signals, and only there.
func TestSignalGuard(t *testing.T) {
	for _, tc := range []struct {
		name    string
		level   sandbox.Level
		abi     int
		guarded bool
	}{
		{name: "landlock without the signal scope", level: sandbox.LevelLandlock, abi: sandbox.LandlockScopeABI - 1, guarded: true},
		{name: "landlock with it", level: sandbox.LevelLandlock, abi: sandbox.LandlockScopeABI},
		{name: "strict, whose pid namespace hides them", level: sandbox.LevelStrict, abi: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := signalGuard(tc.level, tc.abi)
			require.NoError(t, err)
			if !tc.guarded {
				assert.Zero(t, s)
				return
			}
			assert.Contains(t, s.Pids, os.Getppid(), "the parent, as the runner is a worker's")
			assert.NotContains(t, s.Pids, os.Getpid())
		})
	}
}

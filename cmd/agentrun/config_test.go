package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompactionFromEnvironment(t *testing.T) {
	t.Parallel()
	a := &App{Env: []string{"AGENTRUN_DP_BETA=0.5", "AGENTRUN_DP_MIN_KEEP_RATIO=0.4", "AGENTRUN_DP_E_FIXED=3", "HOME=/h"}}
	cfg, err := a.config()
	require.NoError(t, err)
	c := cfg.Compact.config(50000)
	assert.Equal(t, 0.5, c.Beta)
	assert.Equal(t, 0.4, c.MinKeepRatio)
	assert.Equal(t, 3.0, c.EFixed)
	assert.Equal(t, int64(50000), c.MaxContext)
	assert.Zero(t, c.PInput, "unset parameters keep the agent's defaults")

	bad := &App{Env: []string{"AGENTRUN_DP_BETA=lots"}}
	_, err = bad.config()
	assert.Error(t, err, "a malformed parameter is a usage error")
}

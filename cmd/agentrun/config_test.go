package main

import (
	"os/user"
	"path/filepath"
	"strings"
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

// TestToolsHomeWithoutHOME runs exec with no HOME in agentrun's environment, as a system
// service or `env -i` starts it: the tools get the account's home as HOME, as a login
// would set it (they had none, and `go test` found no build cache).
func TestToolsHomeWithoutHOME(t *testing.T) {
	t.Parallel()
	u, err := user.Current()
	require.NoError(t, err)
	dir, env, script := execSetup(t, "steps:\n  - tool_calls: [{name: Bash, input: {command: 'echo HOME=$HOME'}}]\n  - text: Done.\n")
	var noHome []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") {
			noHome = append(noHome, kv)
		}
	}
	o := agentrun(t, invocation{args: []string{"exec", "--script", script, "Go."}, env: noHome, dir: dir})
	require.Zero(t, o.code, o.stderr)
	assert.Contains(t, o.stdout, "HOME="+filepath.Clean(u.HomeDir)+"\n")
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/worker"
)

// workerExeScript has the Bash tool write the executable of its worker (its parent,
// the serving stage) to worker-exe.
const workerExeScript = `steps:
  - tool_calls:
      - name: Bash
        input: {command: "readlink /proc/$PPID/exe > worker-exe"}
  - text: done
`

// TestWorkerBinary checks, in the process table, which executable a session's worker
// runs as: agentrun-worker when it lies next to agentrun, agentrun itself when not.
func TestWorkerBinary(t *testing.T) {
	t.Parallel()
	alone := filepath.Join(t.TempDir(), "agentrun")
	require.NoError(t, os.Link(agentrunBin(t), alone))
	tests := map[string]struct{ bin, want string }{
		"installed together": {bin: agentrunBin(t), want: filepath.Join(filepath.Dir(agentrunBin(t)), worker.BinaryName)},
		"leak-checked build": {bin: leakBin(t), want: filepath.Join(filepath.Dir(leakBin(t)), worker.BinaryName)},
		"agentrun alone":     {bin: alone, want: alone},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir, env, script := execSetup(t, workerExeScript)
			o := agentrun(t, invocation{bin: tt.bin, args: []string{"exec", "--script", script, "--sandbox", "off", "--bash-mode", "4467", "Which worker?"},
				env: env, dir: dir})
			require.Equal(t, 0, o.code, o.stderr)
			b, err := os.ReadFile(filepath.Join(dir, "worker-exe"))
			require.NoError(t, err, "the tool ran: %s", o.stdout)
			assert.Equal(t, tt.want, strings.TrimSpace(string(b)))
		})
	}
}

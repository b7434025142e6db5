package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/transport/scripted"
)

// TestChecksOutliveNoToolProcess has a session leave a process running, in a session of
// its own, that waits for the check to begin (a FIFO) and then overwrites the file the
// check has just written, as a hidden test is: the checks must not run beside what the
// session's tools left, so the file stays as the check wrote it and the check passes.
func TestChecksOutliveNoToolProcess(t *testing.T) {
	t.Parallel()
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock, sandbox.LevelOff} {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel()
			if err := sandbox.Probe().Supports(level); err != nil {
				t.Skip(err)
			}
			dir, ws := fifoWorkspace(t, "begin", "tampered")
			script, err := scripted.ParseScript("leave.yaml", []byte(`steps:
  - tool_calls: [{name: Bash, input: {command: "setsid sh -c 'read x < begin; echo forged > hidden.txt; echo done > tampered' >/dev/null 2>&1 < /dev/null &"}}]
  - text: Left a process behind.
`))
			require.NoError(t, err)
			// The check writes its file, then gives a process that waits on begin a
			// second to open it, and one to say it has struck.
			spec := writeSpec(t, dir, fmt.Sprintf(`version: 1
defaults:
  tools: [Bash]
  workspace: {dir: ws, mode: shared}
  sandbox: {level: %s}
jobs:
  - id: leave
    model: leave
    prompt: Leave a process.
    checks:
      - name: intact
        run: "echo genuine > hidden.txt; timeout 1 sh -c 'echo go > begin' && timeout 1 sh -c 'read y < tampered'; grep -qx genuine hidden.txt"
`, level))
			r := newRunner(t, runner.Options{Out: filepath.Join(dir, "out"), Environ: os.Environ(),
				Providers: newInProcess(map[string]*scripted.Script{"leave": script})})
			sum, err := r.Run(context.Background(), spec)
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(ws, "hidden.txt"))
			require.NoError(t, err)
			assert.Equal(t, "genuine", strings.TrimSpace(string(got)), "what the check wrote, untouched")
			assert.Equal(t, 1, sum.Totals.Passed, sum.Text())
		})
	}
}

package worker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// TestInputEndDuringACallEndsTheWorker checks that a worker whose requests end while a
// call runs (its runner gone, or closing it) cancels the call and exits by itself, at
// every level. The call's end used to block for ever on a reply nobody took, and the
// worker waited for it: a process, and at strict a whole sandbox, that only a kill ended.
func TestInputEndDuringACallEndsTheWorker(t *testing.T) {
	t.Parallel()
	for _, level := range sandbox.Levels {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel()
			if err := sandbox.Probe().Supports(level); err != nil {
				t.Skipf("this machine cannot run level %s: %v", level, err)
			}
			ws, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			started := filepath.Join(ws, "started")
			require.NoError(t, syscall.Mkfifo(started, 0o600))
			m, err := sandbox.ParseMode("0467")
			require.NoError(t, err)
			home, _ := os.UserHomeDir()
			spec := sandbox.Spec{Level: level, Mode: m, Workspace: ws, Home: home}
			c := New(Config{Spec: spec, Hidden: spec.Hidden(), BashMode: "0467", Timeout: time.Minute, IdleExit: time.Hour,
				Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home}}, os.Args[0], nil)
			p, _, err := start(context.Background(), c.cfg, c.binary, nil, nil, nil)
			require.NoError(t, err)
			ended := make(chan error, 1)
			go func() { ended <- p.child.wait() }()
			exited := false
			t.Cleanup(func() {
				if !exited {
					_ = p.child.kill()
					t.Logf("killed: %v", <-ended)
				}
				_ = p.rep.Close()
				<-p.readDone
				if p.cgroup != nil {
					assert.NoError(t, p.cgroup.Remove())
				}
			})

			in, err := json.Marshal(map[string]string{"command": "echo > started; exec sleep 60"})
			require.NoError(t, err)
			require.NoError(t, p.write(frameCall, "1", "Bash", string(in), ""))
			_, err = os.ReadFile(started) // returns once the call runs
			require.NoError(t, err)
			require.NoError(t, p.req.Close())

			select {
			case err := <-ended:
				exited = true
				assert.NoError(t, err, "the worker exits with status 0 once its input has ended: %s", p.stderr)
			case <-time.After(30 * time.Second):
				t.Fatalf("the worker still runs 30 s after its input ended during a call: %s", p.stderr)
			}
		})
	}
}

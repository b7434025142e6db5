package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/worker"
)

// newClient starts a client whose worker is this test binary, on a fresh workspace.
func newClient(t *testing.T, level sandbox.Level, mode string) (*worker.Client, string) {
	t.Helper()
	return newClientPolicy(t, level, mode, mode)
}

// newClientPolicy is newClient with the classifier's bash_mode apart from the kernel's.
func newClientPolicy(t *testing.T, level sandbox.Level, mode, policy string) (*worker.Client, string) {
	t.Helper()
	return newClientWith(t, level, mode, policy, nil)
}

// newClientWith is newClientPolicy with edit, when set, changing the config first.
func newClientWith(t *testing.T, level sandbox.Level, mode, policy string, edit func(*worker.Config)) (*worker.Client, string) {
	t.Helper()
	if err := sandbox.Probe().Supports(level); err != nil {
		t.Skipf("this machine cannot run level %s: %v", level, err)
	}
	ws := t.TempDir()
	ws, err := filepath.EvalSymlinks(ws)
	require.NoError(t, err)
	m, err := sandbox.ParseMode(mode)
	require.NoError(t, err)
	home, _ := os.UserHomeDir()
	cfg := worker.Config{
		Spec:     sandbox.Spec{Level: level, Mode: m, Workspace: ws, Home: home},
		Env:      []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8"},
		BashMode: policy, Timeout: time.Minute, IdleExit: time.Hour,
	}
	cfg.Hidden = cfg.Spec.Hidden()
	if edit != nil {
		edit(&cfg)
	}
	c := worker.New(cfg, os.Args[0], nil)
	t.Cleanup(func() { assert.NoError(t, c.Close()) })
	return c, ws
}

func bash(t *testing.T, c *worker.Client, cmd string) (string, bool) {
	t.Helper()
	in, err := json.Marshal(map[string]string{"command": cmd})
	require.NoError(t, err)
	r := c.RunTool(context.Background(), "Bash", in)
	return r.Content, r.IsError
}

func TestWorkerRunsTools(t *testing.T) {
	t.Parallel()
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock, sandbox.LevelOff} {
		t.Run(string(level), func(t *testing.T) {
			c, ws := newClient(t, level, "0467")
			out, isErr := bash(t, c, "echo hello > made.txt; cat made.txt; echo pid=$$")
			require.False(t, isErr, out)
			assert.Contains(t, out, "hello")
			got, err := os.ReadFile(filepath.Join(ws, "made.txt"))
			require.NoError(t, err)
			assert.Equal(t, "hello\n", string(got))
			r := c.Ready()
			require.NotNil(t, r)
			assert.Equal(t, level, r.Level)
			assert.Subset(t, r.Layers, level.Layers(os.Getuid() == 0 && level != sandbox.LevelStrict))
			w := c.Exec(context.Background(), "test -f made.txt && exit 3", time.Minute, 0)
			require.NoError(t, w.Err)
			assert.Equal(t, 3, w.ExitCode)
		})
	}
}

type envKey struct{}

// TestRequestEnv checks that the variables a request's context carries reach the
// processes of that request, tool call or command, over the tools' own, and no other
// request's.
func TestRequestEnv(t *testing.T) {
	t.Parallel()
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock, sandbox.LevelOff} {
		t.Run(string(level), func(t *testing.T) {
			c, _ := newClient(t, level, "0467")
			c.SetRequestEnv(func(ctx context.Context) []string {
				env, _ := ctx.Value(envKey{}).([]string)
				return env
			})
			in, err := json.Marshal(map[string]string{"command": `echo "tp=$TRACEPARENT lang=$LANG"`})
			require.NoError(t, err)
			ctx := context.WithValue(context.Background(), envKey{}, []string{"TRACEPARENT=00-abc-def-01", "LANG=C"})
			r := c.RunTool(ctx, "Bash", in)
			require.False(t, r.IsError, r.Content)
			assert.Contains(t, r.Content, "tp=00-abc-def-01 lang=C\n", "the request's variables, over the tools' own")

			r = c.RunTool(context.Background(), "Bash", in)
			require.False(t, r.IsError, r.Content)
			assert.Contains(t, r.Content, "tp= lang=C.UTF-8\n", "another request does not see them")

			ctx = context.WithValue(context.Background(), envKey{}, []string{"TRACEPARENT=00-check-span-01"})
			w := c.Exec(ctx, `echo "tp=$TRACEPARENT"`, time.Minute, 0)
			require.NoError(t, w.Err)
			assert.Equal(t, "tp=00-check-span-01\n", w.Output)
		})
	}
}

// TestStageOneKeepsItsPipes starts workers whose config is large enough that stage 1's
// garbage collector runs before it becomes stage 2 (many hidden paths, as a run as root
// on a busy /etc gives). The request and reply pipes must survive until the exec: a
// File the collector found unreachable was closed by its finalizer, the next
// descriptor took its number, and stage 2 read its config from the wrong one.
func TestStageOneKeepsItsPipes(t *testing.T) {
	t.Parallel()
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock} {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel()
			c, _ := newClientWith(t, level, "0467", "0467", func(cfg *worker.Config) {
				for i := range 50000 {
					cfg.Hidden = append(cfg.Hidden, fmt.Sprintf("/nonexistent/agentrun-test/%d/%s", i, strings.Repeat("x", 40)))
				}
			})
			for range 3 {
				out, isErr := bash(t, c, "echo alive")
				require.False(t, isErr, out)
				assert.Contains(t, out, "alive")
			}
			assert.Equal(t, 1, c.Starts(), "a worker died and was started again")
		})
	}
}

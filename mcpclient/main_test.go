package mcpclient_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/mcpclient"
	"github.com/agentrun/agentrun/mcpclient/mcptest"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/testexit"
	"github.com/agentrun/agentrun/worker"
	"github.com/agentrun/agentrun/worker/workertest"
)

// TestMain checks that no goroutine outlives the tests. The sessions' workers are
// agentrun-worker (workertest) and their stdio server mcp-test-server (mcptest).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit))
}

// harness is a session's worker with the test server's binary in its workspace.
type harness struct {
	t      testing.TB
	client *worker.Client
	ws     string
	mark   string
	events recorder
}

// newHarness starts a worker at the best level this machine has.
func newHarness(t testing.TB) *harness {
	t.Helper()
	return newHarnessAt(t, sandbox.Probe().Best())
}

// newHarnessAt starts a worker at level, skipping when the machine lacks it.
func newHarnessAt(t testing.TB, level sandbox.Level) *harness {
	t.Helper()
	if err := sandbox.Probe().Supports(level); err != nil {
		t.Skipf("this machine cannot run level %s: %v", level, err)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	m, err := sandbox.ParseMode("0467")
	require.NoError(t, err)
	home, _ := os.UserHomeDir()
	cfg := worker.Config{Spec: sandbox.Spec{Level: level, Mode: m, Workspace: ws, Home: home},
		Env:      []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8"},
		BashMode: "0467", Timeout: time.Minute, IdleExit: time.Hour}
	cfg.Hidden = cfg.Spec.Hidden()
	h := &harness{t: t, client: worker.New(cfg, workertest.Bin(t), nil), ws: ws,
		mark: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())}
	_, err = mcptest.Link(t, ws, "mcp-test-server")
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, h.client.Close())
		assert.Empty(t, marked(t, h.mark), "no process of the test's servers outlives it")
	})
	return h
}

// stdio is the config of a test server of mode.
func (h *harness) stdio(name, mode string) mcpclient.Config {
	return mcpclient.Config{Name: name, Command: "./mcp-test-server",
		Env:            map[string]string{mcptest.Env: mode, mcptest.MarkEnv: h.mark},
		StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second}
}

// connect connects the configs, and closes the set when the test ends.
func (h *harness) connect(configs ...mcpclient.Config) *mcpclient.Set {
	h.t.Helper()
	opts := mcpclient.Options{Version: "test"}
	if h.client != nil {
		opts.Starter = h.client
	}
	s := mcpclient.Connect(h.t.Context(), configs, opts)
	h.t.Cleanup(func() {
		start := time.Now()
		assert.NoError(h.t, s.Close())
		assert.Less(h.t, time.Since(start), worker.MCPStopTimeout+time.Second, "closing is bounded")
	})
	s.Attach(h.events.add)
	return s
}

// recorder keeps the events of a Set.
type recorder struct {
	mu   sync.Mutex
	msgs []protocol.Message
}

func (r *recorder) add(m protocol.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
}

func (r *recorder) all() []protocol.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]protocol.Message(nil), r.msgs...)
}

// statuses are the mcp_status events, as "server status".
func (r *recorder) statuses() []string {
	var out []string
	for _, m := range r.all() {
		if m.Kind == protocol.KindMCPStatus {
			out = append(out, m.MCP.Name+" "+m.MCP.Status)
		}
	}
	return out
}

// errors are the error events of kind.
func (r *recorder) errors(kind protocol.ErrorKind) []string {
	var out []string
	for _, m := range r.all() {
		if m.Kind == protocol.KindError && m.Err.Kind == kind {
			out = append(out, m.Err.Message)
		}
	}
	return out
}

// marked lists the live processes of the test's servers.
func marked(t testing.TB, m string) []int {
	t.Helper()
	pids, err := mcptest.Processes(m)
	require.NoError(t, err)
	return pids
}

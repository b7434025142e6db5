package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/transport/scripted"
)

// recordedOp is one operation the fake telemetry heard of.
type recordedOp struct {
	op     agent.Op
	parent agent.OpKind
	end    *agent.SpanEnd
}

func (r *recordedOp) Retry(protocol.Message, bool, protocol.Usage) {}
func (r *recordedOp) End(e agent.SpanEnd)                          { r.end = &e }

type opKey struct{}

// fakeTelemetry records operations and gives processes the kind of the operation of
// their context as TRACEPARENT.
type fakeTelemetry struct {
	mu  sync.Mutex
	ops []*recordedOp
}

func (f *fakeTelemetry) Start(ctx context.Context, op agent.Op) (context.Context, agent.Span) {
	r := &recordedOp{op: op}
	if p, ok := ctx.Value(opKey{}).(*recordedOp); ok {
		r.parent = p.op.Kind
	}
	f.mu.Lock()
	f.ops = append(f.ops, r)
	f.mu.Unlock()
	return context.WithValue(ctx, opKey{}, r), r
}

func (f *fakeTelemetry) ProcessEnv(ctx context.Context) []string {
	if r, ok := ctx.Value(opKey{}).(*recordedOp); ok {
		return []string{"TRACEPARENT=op-" + string(rune('0'+r.op.Kind))}
	}
	return nil
}

// TestTelemetryOperations checks what the runner reports to its Telemetry: the run, the
// session inside it, the agent's operations and the check inside the session, each
// ended, and that the tool process and the check get the trace context of their own
// operation.
func TestTelemetryOperations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := writeSpec(t, dir, `version: 1
defaults: {tools: [Bash], sandbox: {level: "off"}}
jobs:
  - id: traced
    prompt: Look.
    checks:
      - {name: env, run: 'echo "check=$TRACEPARENT"'}
`)
	script, err := scripted.ParseScript("traced", []byte(`steps:
  - tool_calls: [{name: Bash, input: {command: 'echo "tool=$TRACEPARENT"'}}]
  - text: Done.
`))
	require.NoError(t, err)
	tel := &fakeTelemetry{}
	r := newRunner(t, runner.Options{Out: filepath.Join(dir, "out"), Providers: oneModel{scripted.New(scripted.Options{Default: script})},
		Telemetry: tel, Secrets: []string{"sk-runner-secret"}, Environ: os.Environ()})
	sum, err := r.Run(t.Context(), spec)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Totals.Passed, "%+v", sum.Sessions)

	type shape struct{ kind, parent agent.OpKind }
	var got []shape
	for _, o := range tel.ops {
		got = append(got, shape{o.op.Kind, o.parent})
		require.NotNil(t, o.end, "operation %v never ended", o.op.Kind)
	}
	assert.Equal(t, []shape{{agent.OpRun, 0}, {agent.OpSession, agent.OpRun}, {agent.OpChat, agent.OpSession},
		{agent.OpTool, agent.OpSession}, {agent.OpChat, agent.OpSession}, {agent.OpCheck, agent.OpSession}}, got)

	run, sess, tool, check := tel.ops[0], tel.ops[1], tel.ops[3], tel.ops[5]
	assert.Equal(t, 1, run.op.Sessions)
	assert.Contains(t, run.op.Secrets, "sk-runner-secret")
	require.Len(t, run.end.Results, 1)
	assert.Equal(t, protocol.StatusSuccess, run.end.Results[0].Status)
	assert.Equal(t, "traced", sess.op.Name)
	assert.Equal(t, "traced", sess.op.Key)
	assert.Equal(t, 1, sess.op.Attempt)
	require.NotNil(t, sess.end.Result)
	assert.Equal(t, run.end.Results[0].SessionID, sess.op.SessionID)
	assert.Equal(t, protocol.StatusSuccess, sess.end.Result.Status)
	assert.Contains(t, tool.end.Tool.Content, "tool=op-4", "the tool process gets its own operation's context")
	assert.Equal(t, "env", check.op.Name)
	require.NotNil(t, check.end.Check)
	assert.Contains(t, check.end.Check.Output, "check=op-7", "the check gets its own operation's context")
}

package main

import (
	"bytes"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/telemetry"
	"github.com/agentrun/agentrun/telemetry/otlptest"
	"github.com/agentrun/agentrun/transport/scripted"
)

// The scripts of the telemetry runs: a model call overloaded once and then a tool
// call, and a plain answer.
const (
	otelToolScript = `steps:
  - text: Looking at the environment.
    fault: {status: 529, times: 1}
    tool_calls:
      - name: Bash
        input: {command: 'echo "tp=$TRACEPARENT token=$E2E_TOKEN"'}
  - text: Done.
`
	otelCheckScript = `steps:
  - text: Nothing to change.
`
)

// otelSpec is two sessions: one calls a tool after a retry, the other's check fails.
func otelSpec(propagate bool) string {
	tel := ""
	if propagate {
		tel = "telemetry: {propagate_to_provider: true}\n"
	}
	return `version: 1
concurrency: 2
` + tel + `defaults:
  provider: anthropic
  max_turns: 4
  tools: [Bash]
  timeout: 1m
  secrets: [E2E_TOKEN]
  env: {E2E_TOKEN: "${E2E_TOKEN}"}
  workspace: {dir: ws, mode: copy}
jobs:
  - id: tool
    model: otel-tool
    prompt: Look at the environment.
  - id: checked
    model: otel-checked
    prompt: Change nothing.
    checks:
      - {name: must-fail, run: 'echo "tp=$TRACEPARENT token=$E2E_TOKEN"; exit 3'}
`
}

// modelServer serves the telemetry scripts in the Anthropic format and records the
// traceparent header of every request, by session.
type modelServer struct {
	*httptest.Server
	mu      sync.Mutex
	parents map[string][]string
}

func newModelServer(t *testing.T) *modelServer {
	t.Helper()
	tool, err := scripted.ParseScript("otel-tool", []byte(otelToolScript))
	require.NoError(t, err)
	check, err := scripted.ParseScript("otel-checked", []byte(otelCheckScript))
	require.NoError(t, err)
	h := scripted.New(scripted.Options{Scripts: map[string]*scripted.Script{"otel-tool": tool, "otel-checked": check}}).Handler()
	m := &modelServer{parents: map[string][]string{}}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		key := r.Header.Get("X-Agentrun-Session")
		m.parents[key] = append(m.parents[key], r.Header.Get("traceparent"))
		m.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *modelServer) traceparents(key string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.parents[key]...)
}

// otelRun is one telemetry run's environment and outcome.
type otelRun struct {
	out     string
	outcome outcome
	sec     e2eSecrets
	header  string // the secret of the export's authorization header
}

// runWithTelemetry runs otelSpec against model with the export going to endpoint.
func runWithTelemetry(t *testing.T, model *modelServer, endpoint string, propagate bool, extra ...string) otelRun {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "ws/README.md", "# workspace\n")
	spec := writeFile(t, dir, "jobs.yaml", otelSpec(propagate))
	r := otelRun{out: filepath.Join(dir, "out"), sec: newSecrets(t), header: "otlp-" + randomHex(t)}
	env := baseEnv(t, append([]string{"ANTHROPIC_API_KEY=" + r.sec.anthropicKey, "ANTHROPIC_BASE_URL=" + model.URL + "/v1",
		"E2E_TOKEN=" + r.sec.token, "AGENTRUN_LOG_LEVEL=debug",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint, "OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20" + r.header}, extra...)...)
	r.outcome = agentrun(t, invocation{bin: leakBin(t), args: runArgs(spec, r.out), env: env})
	return r
}

const (
	inboundTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	inboundParent = "00f067aa0ba902b7"
)

// TestTelemetrySpanTree runs two sessions, one with a retried model call and a tool
// call, the other with a failing check, exporting to a real OTLP/HTTP receiver, and
// checks what it received: the span tree (names, kinds, parentage) under the inbound
// TRACEPARENT, the attributes and their values against the session's artifacts, the
// trace context the tool process, the check and the provider saw, the metric points,
// and that no secret is in any payload.
func TestTelemetrySpanTree(t *testing.T) {
	t.Parallel()
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	model := newModelServer(t)
	r := runWithTelemetry(t, model, rcv.URL, true, "AGENTRUN_OTEL_CONTENT=1", "OTEL_SERVICE_NAME=agentrun-ci",
		"TRACEPARENT=00-"+inboundTrace+"-"+inboundParent+"-01")
	require.Equal(t, 1, r.outcome.code, "one session fails its check\n%s", lastLines(r.outcome.stderr, 30))
	assert.NotContains(t, r.outcome.stderr, "telemetry:", "no telemetry warning")
	assertNoGoroutines(t, r.outcome.stderr)
	require.Empty(t, rcv.Errors())

	spans := rcv.Spans()
	byID := map[string]otlptest.Span{}
	for _, s := range spans {
		byID[hex.EncodeToString(s.SpanId)] = s
		assert.Equal(t, inboundTrace, hex.EncodeToString(s.TraceId), "every span joins the inbound trace")
		assert.Equal(t, "agentrun-ci", s.Resource["service.name"])
	}
	parentOf := func(s otlptest.Span) string {
		if p, ok := byID[hex.EncodeToString(s.ParentSpanId)]; ok {
			return p.Name
		}
		return hex.EncodeToString(s.ParentSpanId)
	}
	var edges []string
	named := map[string][]otlptest.Span{}
	for _, s := range spans {
		edges = append(edges, s.Name+" < "+parentOf(s))
		named[s.Name] = append(named[s.Name], s)
	}
	assert.ElementsMatch(t, []string{
		"agentrun.run < " + inboundParent,
		"invoke_agent tool < agentrun.run",
		"chat otel-tool < invoke_agent tool",
		"execute_tool Bash < invoke_agent tool",
		"chat otel-tool < invoke_agent tool",
		"invoke_agent checked < agentrun.run",
		"chat otel-checked < invoke_agent checked",
		"agentrun.check must-fail < invoke_agent checked",
	}, edges)
	kinds := map[string]tracepb.Span_SpanKind{}
	for _, s := range spans {
		kinds[s.Name] = s.Kind
	}
	assert.Equal(t, map[string]tracepb.Span_SpanKind{
		"agentrun.run": tracepb.Span_SPAN_KIND_INTERNAL, "invoke_agent tool": tracepb.Span_SPAN_KIND_INTERNAL,
		"invoke_agent checked": tracepb.Span_SPAN_KIND_INTERNAL, "chat otel-tool": tracepb.Span_SPAN_KIND_CLIENT,
		"chat otel-checked": tracepb.Span_SPAN_KIND_CLIENT, "execute_tool Bash": tracepb.Span_SPAN_KIND_INTERNAL,
		"agentrun.check must-fail": tracepb.Span_SPAN_KIND_INTERNAL,
	}, kinds)

	results := resultFiles(t, r.out)
	require.Len(t, results, 2)
	run := named["agentrun.run"][0].Attrs()
	assert.Equal(t, "jobs.yaml", run["agentrun.spec"])
	assert.Equal(t, int64(2), run["agentrun.run.sessions"])
	assert.Equal(t, int64(1), run["agentrun.run.passed"])
	assert.Equal(t, int64(1), run["agentrun.run.failed"])

	host, port, err := net.SplitHostPort(strings.TrimPrefix(model.URL, "http://"))
	require.NoError(t, err)
	usage := map[string]protocol.Usage{} // sessions' totals from their usage events
	for key, res := range results {
		agentSpan := named["invoke_agent "+key][0]
		a := agentSpan.Attrs()
		assert.Equal(t, "invoke_agent", a["gen_ai.operation.name"])
		assert.Equal(t, key, a["gen_ai.agent.name"])
		assert.Equal(t, res.SessionID, a["gen_ai.conversation.id"])
		assert.Equal(t, "anthropic", a["gen_ai.provider.name"])
		assert.Equal(t, "otel-"+key, a["gen_ai.request.model"])
		assert.Equal(t, key, a["agentrun.session.key"])
		assert.Equal(t, string(res.Status), a["agentrun.session.status"])
		assert.Equal(t, res.Usage.Input+res.Usage.CacheRead+res.Usage.CacheCreation, a["gen_ai.usage.input_tokens"])
		assert.Equal(t, res.Usage.Output, a["gen_ai.usage.output_tokens"])

		// Each model call's span holds the usage of its usage event, in order.
		events := jsonLines(t, readFile(t, filepath.Join(r.out, "sessions", key, "events.jsonl")))
		var calls []map[string]any
		for _, ev := range events {
			if ev["type"] == "usage" && ev["kind"] == "agent" {
				calls = append(calls, ev)
			}
		}
		chats := named["chat otel-"+key]
		require.Len(t, chats, len(calls))
		var total protocol.Usage
		for i, c := range chats {
			ca := c.Attrs()
			assert.Equal(t, "chat", ca["gen_ai.operation.name"])
			assert.Equal(t, "anthropic", ca["gen_ai.provider.name"])
			assert.Equal(t, "otel-"+key, ca["gen_ai.request.model"])
			assert.Equal(t, "otel-"+key, ca["gen_ai.response.model"])
			assert.Equal(t, host, ca["server.address"])
			assert.Equal(t, port, strconv.FormatInt(ca["server.port"].(int64), 10))
			assert.NotEmpty(t, ca["gen_ai.response.finish_reasons"])
			in, out := int64(calls[i]["input_tokens"].(float64)), int64(calls[i]["output_tokens"].(float64))
			cr, cc := int64(calls[i]["cache_read_input_tokens"].(float64)), int64(calls[i]["cache_creation_input_tokens"].(float64))
			assert.Equal(t, in+cr+cc, ca["gen_ai.usage.input_tokens"], "input tokens include the cached ones")
			assert.Equal(t, out, ca["gen_ai.usage.output_tokens"])
			assert.Equal(t, cr, ca["gen_ai.usage.cache_read.input_tokens"])
			assert.Equal(t, cc, ca["gen_ai.usage.cache_creation.input_tokens"])
			total = total.Add(protocol.Usage{Input: in, Output: out, CacheRead: cr, CacheCreation: cc})
		}
		usage[key] = total
		assert.Equal(t, res.Usage, total, "the usage events add up to the result's")
	}
	assert.Equal(t, "error_checks", named["invoke_agent checked"][0].Attrs()["error.type"])
	assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, named["invoke_agent checked"][0].Status.Code)

	// The retry: an event of the first model call, counted by reason; nothing of the
	// attempt had arrived, so nothing was voided.
	first := named["chat otel-tool"][0]
	require.Len(t, first.Events, 1)
	ev := otlptest.Attrs(first.Events[0].Attributes)
	assert.Equal(t, "agentrun.retry", first.Events[0].Name)
	assert.Equal(t, "overloaded", ev["agentrun.retry.reason"])
	assert.Equal(t, int64(1), ev["agentrun.retry.attempt"])
	assert.Equal(t, false, ev["agentrun.attempt.voided"])
	assert.Equal(t, int64(1), first.Attrs()["agentrun.retries"])

	// The tool call: its process saw a TRACEPARENT whose parent is the tool's span.
	tool := named["execute_tool Bash"][0]
	ta := tool.Attrs()
	assert.Equal(t, "execute_tool", ta["gen_ai.operation.name"])
	assert.Equal(t, "Bash", ta["gen_ai.tool.name"])
	assert.Equal(t, "function", ta["gen_ai.tool.type"])
	var callID, toolOutput string
	for _, ev := range jsonLines(t, readFile(t, filepath.Join(r.out, "sessions", "tool", "events.jsonl"))) {
		switch ev["type"] {
		case "tool_call":
			callID = ev["id"].(string)
		case "tool_result":
			toolOutput = ev["content"].(string)
		}
	}
	assert.Equal(t, callID, ta["gen_ai.tool.call.id"])
	assert.Equal(t, hex.EncodeToString(tool.SpanId), traceParentID(t, toolOutput), "the tool process's parent is its span")
	assert.Contains(t, ta["gen_ai.tool.call.result"], "token=***", "content is recorded, masked")

	// The check: its process saw its own span as parent; its span failed.
	check := named["agentrun.check must-fail"][0]
	ka := check.Attrs()
	assert.Equal(t, int64(3), ka["agentrun.check.exit_code"])
	assert.Equal(t, false, ka["agentrun.check.passed"])
	assert.Equal(t, "check_failed", ka["error.type"])
	require.Len(t, results["checked"].Checks, 1)
	assert.Equal(t, hex.EncodeToString(check.SpanId), traceParentID(t, results["checked"].Checks[0].Output))

	// The provider saw each model call's span as the parent of its requests, the
	// overloaded attempt included.
	chatIDs := map[string]bool{}
	for _, s := range append(named["chat otel-tool"], named["chat otel-checked"]...) {
		chatIDs[hex.EncodeToString(s.SpanId)] = true
	}
	toolParents := model.traceparents("tool")
	require.Len(t, toolParents, 3, "two model calls, the first sent twice")
	assert.Equal(t, toolParents[0], toolParents[1], "a retried request keeps its span")
	for _, tp := range append(toolParents, model.traceparents("checked")...) {
		assert.True(t, chatIDs[traceParentID(t, tp)], "traceparent %q names no model call's span", tp)
	}

	// The metrics.
	metrics := rcv.Metrics()
	tokens := histogramSums(t, metrics[telemetry.MetricTokenUsage], "gen_ai.token.type")
	var in, out int64
	for _, u := range usage {
		in += u.Input + u.CacheRead + u.CacheCreation
		out += u.Output
	}
	assert.Equal(t, map[string]float64{"input": float64(in), "output": float64(out)}, tokens)
	assert.Equal(t, map[string]uint64{"chat": 3}, histogramCounts(t, metrics[telemetry.MetricOperationDuration], "gen_ai.operation.name"))
	assert.Equal(t, map[string]uint64{"tool": 1, "checked": 1}, histogramCounts(t, metrics[telemetry.MetricAgentDuration], "gen_ai.agent.name"))
	assert.Equal(t, map[string]uint64{"Bash": 1}, histogramCounts(t, metrics[telemetry.MetricToolDuration], "gen_ai.tool.name"))
	assert.Equal(t, map[string]int64{"success": 1, "error_checks": 1}, counterSums(t, metrics[telemetry.MetricSessions], "agentrun.session.status"))
	assert.Equal(t, map[string]int64{"overloaded": 1}, counterSums(t, metrics[telemetry.MetricRetries], "agentrun.retry.reason"))

	// The export carried its header, and no payload holds a secret.
	headers := rcv.Headers()
	require.NotEmpty(t, headers)
	for _, h := range headers {
		assert.Equal(t, "Bearer "+r.header, h.Get("Authorization"))
	}
	secrets := append(r.sec.values(), r.header)
	for _, b := range rcv.Bodies() {
		for _, s := range secrets {
			assert.False(t, bytes.Contains(b, []byte(s)), "an OTLP payload holds a secret")
		}
	}
	assertNoSecretFiles(t, r.out, r.header)
}

// TestTelemetryNotPropagatedToProvider checks that without the spec's consent no model
// request carries the trace context, while tools still get it.
func TestTelemetryNotPropagatedToProvider(t *testing.T) {
	t.Parallel()
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	model := newModelServer(t)
	r := runWithTelemetry(t, model, rcv.URL, false)
	require.Equal(t, 1, r.outcome.code, lastLines(r.outcome.stderr, 30))
	for _, key := range []string{"tool", "checked"} {
		for _, tp := range model.traceparents(key) {
			assert.Empty(t, tp, "session %s sent a traceparent to the provider", key)
		}
	}
	results := resultFiles(t, r.out)
	assert.Regexp(t, traceParent, results["checked"].Checks[0].Output, "checks still get their trace context")
}

// TestTelemetryUnreachable checks that a collector that is down, or that takes
// connections and never answers, leaves the run's result as it was, costs at most the
// flush bound, and is said once.
func TestTelemetryUnreachable(t *testing.T) {
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refusedURL := "http://" + refused.Addr().String()
	require.NoError(t, refused.Close())
	silent, err := net.Listen("tcp", "127.0.0.1:0") // never accepts: requests wait
	require.NoError(t, err)
	defer func() { _ = silent.Close() }()

	model := newModelServer(t)
	base := runWithTelemetry(t, model, "", false, "OTEL_SDK_DISABLED=true")
	require.Equal(t, 1, base.outcome.code, lastLines(base.outcome.stderr, 30))
	for name, endpoint := range map[string]string{"refused": refusedURL, "silent": "http://" + silent.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			r := runWithTelemetry(t, model, endpoint, false)
			assert.Equal(t, base.outcome.code, r.outcome.code, lastLines(r.outcome.stderr, 30))
			got, want := resultFiles(t, r.out), resultFiles(t, base.out)
			for key := range want {
				assert.Equal(t, want[key].Status, got[key].Status, key)
			}
			assert.Equal(t, 1, strings.Count(r.outcome.stderr, "telemetry: export failed"), "one warning:\n%s", r.outcome.stderr)
			assert.Less(t, r.outcome.elapsed, base.outcome.elapsed+telemetry.FlushTimeout+10*time.Second,
				"the run takes at most the flush bound longer")
			assertNoGoroutines(t, r.outcome.stderr)
		})
	}
}

// traceParentID finds a traceparent in s, checks that it names the trace of the
// inbound TRACEPARENT, and returns the parent span id it names.
func traceParentID(t *testing.T, s string) string {
	t.Helper()
	m := traceParent.FindStringSubmatch(s)
	require.NotNil(t, m, "no traceparent in %q", s)
	assert.Equal(t, inboundTrace, m[1], "the trace is the run's")
	return m[2]
}

var traceParent = regexp.MustCompile(`00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]`)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// histogramSums adds up a histogram's sums by the value of attribute key.
func histogramSums(t *testing.T, m *metricpb.Metric, key string) map[string]float64 {
	t.Helper()
	require.NotNil(t, m, "metric missing")
	out := map[string]float64{}
	for _, p := range m.GetHistogram().GetDataPoints() {
		out[otlptest.Attrs(p.Attributes)[key].(string)] += p.GetSum()
	}
	return out
}

// histogramCounts adds up a histogram's counts by the value of attribute key.
func histogramCounts(t *testing.T, m *metricpb.Metric, key string) map[string]uint64 {
	t.Helper()
	require.NotNil(t, m, "metric missing")
	out := map[string]uint64{}
	for _, p := range m.GetHistogram().GetDataPoints() {
		out[otlptest.Attrs(p.Attributes)[key].(string)] += p.Count
	}
	return out
}

// counterSums adds up a counter's points by the value of attribute key.
func counterSums(t *testing.T, m *metricpb.Metric, key string) map[string]int64 {
	t.Helper()
	require.NotNil(t, m, "metric missing")
	require.True(t, m.GetSum().GetIsMonotonic())
	out := map[string]int64{}
	for _, p := range m.GetSum().GetDataPoints() {
		out[otlptest.Attrs(p.Attributes)[key].(string)] += p.GetAsInt()
	}
	return out
}

// assertNoSecretFiles checks that no file under dir holds secret.
func assertNoSecretFiles(t *testing.T, dir, secret string) {
	t.Helper()
	require.NoError(t, filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the export header's secret", path)
		}
		return nil
	}))
}

// TestTelemetryFlushedOnSigterm interrupts a run whose session has a tool running: the
// run still exits within the signal deadline, and the collector has the run's span,
// the cancelled session's and the interrupted tool call's.
func TestTelemetryFlushedOnSigterm(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	dir := t.TempDir()
	writeFile(t, dir, "ws/README.md", "# workspace\n")
	writeFile(t, dir, "sleep.yaml", "steps:\n  - tool_calls:\n      - name: Bash\n        input: {command: 'sleep 30'}\n  - text: Slept.\n")
	spec := writeFile(t, dir, "jobs.yaml", `version: 1
defaults: {provider: scripted, script: sleep.yaml, tools: [Bash], workspace: {dir: ws, mode: copy}}
jobs:
  - {id: sleeper, prompt: Sleep.}
`)
	out := filepath.Join(dir, "out")
	cmd, _, stderr := startAgentrun(t, baseEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL, "AGENTRUN_LOG_LEVEL=debug"),
		runArgs(spec, out)...)
	waitFor(t, "the tool to start", func() bool { return streamsWith(out, `"type":"tool_call"`) == 1 })
	sent := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	code := exitCode(t, cmd)
	assert.Equal(t, exitInterrupted, code, lastLines(stderr.String(), 20))
	assert.Less(t, time.Since(sent), signalDeadline, "the flush keeps within the signal deadline")
	assertNoGoroutines(t, stderr.String())

	status := map[string]any{}
	for _, s := range rcv.Spans() {
		status[s.Name] = s.Attrs()["agentrun.session.status"]
	}
	assert.Contains(t, status, "agentrun.run")
	assert.Contains(t, status, "execute_tool Bash")
	assert.Equal(t, "cancelled", status["invoke_agent sleeper"])
	assert.Equal(t, map[string]int64{"cancelled": 1}, counterSums(t, rcv.Metrics()[telemetry.MetricSessions], "agentrun.session.status"))
}

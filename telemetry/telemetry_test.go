package telemetry_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/telemetry"
	"github.com/agentrun/agentrun/telemetry/otlptest"
)

// start returns a Telemetry exporting to base (an OTLP/HTTP base URL) and the log of
// its warnings.
func start(t *testing.T, base string, content bool, traceParent string) (*telemetry.Telemetry, *observer.ObservedLogs) {
	t.Helper()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_TIMEOUT": "2000", "TRACEPARENT": traceParent}
	if content {
		env["AGENTRUN_OTEL_CONTENT"] = "1"
	}
	cfg, warnings := telemetry.FromEnv(lookup(env))
	require.Empty(t, warnings)
	core, logs := observer.New(zap.WarnLevel)
	tel, err := telemetry.New(cfg, telemetry.Options{Log: zap.New(core), Version: "v-test"})
	require.NoError(t, err)
	return tel, logs
}

func flush(tel *telemetry.Telemetry) {
	ctx, cancel := context.WithTimeout(context.Background(), telemetry.FlushTimeout)
	defer cancel()
	tel.Shutdown(ctx)
}

const secret = "sk-test-9f3a7c1e" // a value that must reach no attribute

// TestNestedOperations drives the observer as a session with a sub-agent and a
// compaction does, and checks the spans received: names, kinds, parentage, the content
// attributes (masked) and the inbound trace context.
func TestNestedOperations(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	tel, logs := start(t, rcv.URL, true, parent)

	ctx, run := tel.Start(t.Context(), agent.Op{Kind: agent.OpRun, Name: "jobs.yaml", Sessions: 1, Secrets: []string{secret}})
	sctx, sess := tel.Start(ctx, agent.Op{Kind: agent.OpSession, Name: "fix", Key: "fix", SessionID: "s1", Attempt: 1})
	req := protocol.Request{System: "Be careful.", MaxTokens: 100, Messages: []protocol.Turn{protocol.UserText("the key is " + secret)}}
	_, chat := tel.Start(sctx, agent.Op{Kind: agent.OpChat, SessionID: "s1", Provider: "anthropic", Model: "m1", Server: "api.example:443", Request: req})
	chat.End(agent.SpanEnd{Stop: "tool_use", Usage: protocol.Usage{Input: 10, Output: 2},
		Output: []protocol.Block{{Type: protocol.BlockToolUse, ID: "t1", Name: "Task", Input: json.RawMessage(`{"prompt":"p"}`)}}})
	tctx, task := tel.Start(sctx, agent.Op{Kind: agent.OpTool, SessionID: "s1", Call: protocol.ToolCall{ID: "t1", Name: "Task", Input: `{"prompt":"p"}`}})
	actx, sub := tel.Start(tctx, agent.Op{Kind: agent.OpSubAgent, Name: "fix", SessionID: "sub_1", Model: "m1"})
	_, subChat := tel.Start(actx, agent.Op{Kind: agent.OpChat, SessionID: "sub_1", Provider: "anthropic", Model: "m1", Request: req})
	subChat.End(agent.SpanEnd{Stop: "end_turn", Usage: protocol.Usage{Input: 5, Output: 1}})
	sub.End(agent.SpanEnd{Usage: protocol.Usage{Input: 5, Output: 1}, Turns: 1})
	task.End(agent.SpanEnd{Tool: protocol.ToolResult{ToolUseID: "t1", Name: "Task", Content: "found " + secret}})
	cctx, compact := tel.Start(sctx, agent.Op{Kind: agent.OpCompact, SessionID: "s1", Trigger: agent.TriggerAuto, Reason: "cost", Turns: 9, Keep: 3})
	_, summary := tel.Start(cctx, agent.Op{Kind: agent.OpChat, SessionID: "s1", Provider: "anthropic", Model: "m1", Request: req})
	summary.End(agent.SpanEnd{Stop: "end_turn"})
	compact.End(agent.SpanEnd{})
	sess.End(agent.SpanEnd{Result: &protocol.Result{Status: protocol.StatusSuccess, Provenance: protocol.Provenance{Provider: "anthropic", Model: "m1"}}})
	run.End(agent.SpanEnd{Results: []*protocol.Result{{JobID: "fix", Status: protocol.StatusSuccess}}})
	flush(tel)
	require.Empty(t, rcv.Errors())
	assert.Zero(t, logs.Len(), "no warning: %v", logs.All())

	got := rcv.Spans()
	byID := map[string]otlptest.Span{}
	for _, s := range got {
		byID[hex.EncodeToString(s.SpanId)] = s
	}
	parentName := func(s otlptest.Span) string {
		if p, ok := byID[hex.EncodeToString(s.ParentSpanId)]; ok {
			return p.Name
		}
		return hex.EncodeToString(s.ParentSpanId)
	}
	var edges []string
	spans := map[string]otlptest.Span{} // by "name < parent"
	for _, s := range got {
		e := s.Name + " < " + parentName(s)
		edges = append(edges, e)
		spans[e] = s
	}
	assert.ElementsMatch(t, []string{
		"agentrun.run < b7ad6b7169203331", // the inbound TRACEPARENT parents the run
		"invoke_agent fix < agentrun.run",
		"chat m1 < invoke_agent fix", // the session's model call, and the sub-agent's
		"chat m1 < invoke_agent fix",
		"execute_tool Task < invoke_agent fix",
		"invoke_agent fix < execute_tool Task", // a sub-agent nests in its Task call
		"agentrun.compact < invoke_agent fix",
		"chat m1 < agentrun.compact", // the summary request nests in its compaction
	}, edges)
	runSpan := spans["agentrun.run < b7ad6b7169203331"]
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", hex.EncodeToString(runSpan.TraceId))
	var first otlptest.Span
	for _, s := range got {
		if s.Name == "chat m1" && s.Attrs()["gen_ai.conversation.id"] == "s1" && parentName(s) == "invoke_agent fix" {
			first = s
		}
	}
	require.NotNil(t, first.Span)
	spans["chat m1"] = first
	spans["execute_tool Task"] = spans["execute_tool Task < invoke_agent fix"]
	spans["invoke_agent fix"] = spans["invoke_agent fix < agentrun.run"]
	spans["invoke_agent fix (sub)"] = spans["invoke_agent fix < execute_tool Task"]
	spans["agentrun.compact"] = spans["agentrun.compact < invoke_agent fix"]
	spans["agentrun.run"] = runSpan

	assert.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, spans["chat m1"].Kind)
	assert.Equal(t, tracepb.Span_SPAN_KIND_INTERNAL, spans["execute_tool Task"].Kind)
	assert.Equal(t, tracepb.Span_SPAN_KIND_INTERNAL, spans["invoke_agent fix"].Kind)

	chatAttrs := spans["chat m1"].Attrs()
	assert.Equal(t, "api.example", chatAttrs["server.address"])
	assert.Equal(t, int64(443), chatAttrs["server.port"])
	assert.Equal(t, int64(10), chatAttrs["gen_ai.usage.input_tokens"])
	assert.Equal(t, []any{"tool_use"}, chatAttrs["gen_ai.response.finish_reasons"])
	assert.JSONEq(t, `[{"type":"text","content":"Be careful."}]`, chatAttrs["gen_ai.system_instructions"].(string))
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"the key is ***"}]}]`, chatAttrs["gen_ai.input.messages"].(string),
		"content is recorded, masked")
	assert.JSONEq(t, `[{"role":"assistant","finish_reason":"tool_use","parts":[{"type":"tool_call","id":"t1","name":"Task","arguments":{"prompt":"p"}}]}]`,
		chatAttrs["gen_ai.output.messages"].(string))
	toolAttrs := spans["execute_tool Task"].Attrs()
	assert.Equal(t, `"found ***"`, toolAttrs["gen_ai.tool.call.result"])
	assert.Equal(t, true, spans["invoke_agent fix (sub)"].Attrs()["agentrun.sub_agent"])
	assert.Equal(t, "sub_1", spans["invoke_agent fix (sub)"].Attrs()["gen_ai.conversation.id"])
	assert.Equal(t, "cost", spans["agentrun.compact"].Attrs()["agentrun.compact.reason"])
	assert.Equal(t, "v-test", spans["agentrun.run"].Resource["service.version"])
	assert.Equal(t, "agentrun", spans["agentrun.run"].Resource["service.name"])

	for _, b := range rcv.Bodies() {
		assert.False(t, bytes.Contains(b, []byte(secret)), "a payload holds the secret")
	}
}

// TestContentOffByDefault checks that without AGENTRUN_OTEL_CONTENT no content
// attribute is recorded.
func TestContentOffByDefault(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	tel, _ := start(t, rcv.URL, false, "")
	req := protocol.Request{System: "sys", Messages: []protocol.Turn{protocol.UserText("hello")}}
	ctx, chat := tel.Start(t.Context(), agent.Op{Kind: agent.OpChat, Provider: "openai", Model: "m", Request: req})
	_, tool := tel.Start(ctx, agent.Op{Kind: agent.OpTool, Call: protocol.ToolCall{ID: "1", Name: "Bash", Input: `{"command":"ls"}`}})
	tool.End(agent.SpanEnd{Tool: protocol.ToolResult{Content: "a.txt", IsError: true}})
	chat.End(agent.SpanEnd{Output: []protocol.Block{{Type: protocol.BlockText, Text: "hi"}}})
	flush(tel)
	spans := rcv.Spans()
	require.Len(t, spans, 2)
	for _, s := range spans {
		for k := range s.Attrs() {
			assert.NotContains(t, []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
				"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}, k)
		}
	}
	assert.Equal(t, "tool_error", spans[0].Attrs()["error.type"], "a tool's error result fails its span")
	assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, spans[0].Status.Code)
}

// TestProcessEnvAndTransport checks the trace context going out: the variables a
// process gets name the span of their context, and so does the header of a model
// request.
func TestProcessEnvAndTransport(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	tel, _ := start(t, rcv.URL, false, "")
	defer flush(tel)
	assert.Empty(t, tel.ProcessEnv(t.Context()), "no span, no variables")

	ctx, span := tel.Start(t.Context(), agent.Op{Kind: agent.OpTool, Call: protocol.ToolCall{Name: "Bash"}})
	defer span.End(agent.SpanEnd{})
	env := tel.ProcessEnv(ctx)
	require.Len(t, env, 1)
	assert.Regexp(t, `^TRACEPARENT=00-[0-9a-f]{32}-[0-9a-f]{16}-01$`, env[0])

	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Get("traceparent") }))
	defer srv.Close()
	tr := tel.Transport(http.DefaultTransport)
	hc := &http.Client{Transport: tr}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	require.NoError(t, err)
	resp, err := hc.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, strings.TrimPrefix(env[0], "TRACEPARENT="), got)
	assert.Empty(t, req.Header.Get("traceparent"), "the caller's request is not changed")
	hc.CloseIdleConnections()
}

// TestUnreachableCollector checks that a collector that refuses connections, or takes
// them and never answers, costs a run one warning and no more than the flush bound.
func TestUnreachableCollector(t *testing.T) {
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refusedURL := "http://" + refused.Addr().String()
	require.NoError(t, refused.Close()) // nothing listens there now

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = silent.Close() }() // accepted by the kernel's backlog, never answered

	for name, base := range map[string]string{"refused": refusedURL, "silent": "http://" + silent.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			tel, logs := start(t, base, false, "")
			for i := range 3 {
				ctx, s := tel.Start(t.Context(), agent.Op{Kind: agent.OpSession, Name: "job", SessionID: string(rune('a' + i))})
				_, c := tel.Start(ctx, agent.Op{Kind: agent.OpChat, Model: "m"})
				c.End(agent.SpanEnd{Usage: protocol.Usage{Input: 1, Output: 1}})
				s.End(agent.SpanEnd{Result: &protocol.Result{Status: protocol.StatusSuccess}})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			began := time.Now()
			tel.Shutdown(ctx)
			assert.Less(t, time.Since(began), 500*time.Millisecond+2*time.Second, "the flush keeps to its bound")
			warnings := logs.FilterMessageSnippet("export failed").All()
			assert.Len(t, warnings, 1, "one warning for every failed export: %v", logs.All())
		})
	}
}

package telemetry

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// The span names of agentrun's own operations; the GenAI ones are "invoke_agent
// {job}", "chat {model}" and "execute_tool {tool}".
const (
	SpanRun     = "agentrun.run"
	SpanCompact = "agentrun.compact"
	SpanCheck   = "agentrun.check" // followed by the check's name
)

// scope is what the operations inside a run or a session share: the secrets no
// attribute may hold.
type scope struct {
	secrets []string
	redact  *sink.Redactor
}

type scopeKey struct{}

var emptyScope = &scope{redact: sink.NewRedactor(nil, nil)}

func scopeOf(ctx context.Context) *scope {
	if sc, ok := ctx.Value(scopeKey{}).(*scope); ok {
		return sc
	}
	return emptyScope
}

// with returns the scope with more secrets.
func (sc *scope) with(secrets []string) *scope {
	all := slices.Clone(sc.secrets)
	for _, s := range secrets {
		if s != "" && !slices.Contains(all, s) {
			all = append(all, s)
		}
	}
	if len(all) == len(sc.secrets) {
		return sc
	}
	return &scope{secrets: all, redact: sink.NewRedactor(nil, all)}
}

// str is a string attribute, masked.
func (sc *scope) str(key, v string) attribute.KeyValue {
	return attribute.String(key, sc.redact.String(v))
}

// Start implements agent.Observer: it opens the span of op as a child of the span in
// ctx (the inbound trace context for the run).
func (t *Telemetry) Start(ctx context.Context, op agent.Op) (context.Context, agent.Span) {
	sc := scopeOf(ctx)
	switch op.Kind {
	case agent.OpRun:
		if t.parent.IsValid() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, t.parent)
		}
		fallthrough
	case agent.OpSession:
		if next := sc.with(op.Secrets); next != sc {
			sc = next
			ctx = context.WithValue(ctx, scopeKey{}, sc)
		}
	default:
		// Other operations keep their parent's scope.
	}
	s := &span{t: t, op: op, sc: sc, start: t.now()}
	name, kind, attrs := s.begin()
	ctx, s.span = t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return ctx, s
}

// span is one operation's span.
type span struct {
	t       *Telemetry
	op      agent.Op
	sc      *scope
	start   time.Time
	span    trace.Span
	retries int
}

// The attribute keys: the GenAI conventions' and agentrun's.
const (
	keyOperation     = "gen_ai.operation.name"
	keyProvider      = "gen_ai.provider.name"
	keyRequestModel  = "gen_ai.request.model"
	keyResponseModel = "gen_ai.response.model"
	keyConversation  = "gen_ai.conversation.id"
	keyAgentName     = "gen_ai.agent.name"
	keyToolName      = "gen_ai.tool.name"
	keyToolType      = "gen_ai.tool.type"
	keyErrorType     = "error.type"
	keyCost          = "agentrun.cost.usd"
	keyStatus        = "agentrun.session.status"
	keyKey           = "agentrun.session.key"
)

// begin returns the span's name, kind and first attributes.
func (s *span) begin() (string, trace.SpanKind, []attribute.KeyValue) {
	op, sc := s.op, s.sc
	switch op.Kind {
	case agent.OpRun:
		return SpanRun, trace.SpanKindInternal, []attribute.KeyValue{sc.str("agentrun.spec", op.Name),
			attribute.Int("agentrun.run.sessions", op.Sessions)}
	case agent.OpSession:
		attrs := []attribute.KeyValue{attribute.String(keyOperation, "invoke_agent"), sc.str(keyAgentName, op.Name),
			sc.str(keyConversation, op.SessionID), sc.str(keyKey, op.Key), attribute.Int("agentrun.session.attempt", op.Attempt)}
		if op.Provider != "" {
			attrs = append(attrs, attribute.String(keyProvider, providerName(op.Provider)))
		}
		if op.Model != "" {
			attrs = append(attrs, sc.str(keyRequestModel, op.Model))
		}
		return "invoke_agent " + op.Name, trace.SpanKindInternal, attrs
	case agent.OpSubAgent:
		return "invoke_agent " + op.Name, trace.SpanKindInternal, []attribute.KeyValue{
			attribute.String(keyOperation, "invoke_agent"), sc.str(keyAgentName, op.Name),
			sc.str(keyConversation, op.SessionID), sc.str(keyRequestModel, op.Model), attribute.Bool("agentrun.sub_agent", true)}
	case agent.OpChat:
		attrs := append(s.chatAttrs(), sc.str(keyConversation, op.SessionID),
			attribute.Int("gen_ai.request.max_tokens", op.Request.MaxTokens), attribute.Bool("gen_ai.request.stream", true))
		if s.t.content {
			attrs = append(attrs, sc.content("gen_ai.system_instructions", systemInstructions(op.Request.SystemPrompt())),
				sc.content("gen_ai.input.messages", inputMessages(op.Request.Messages)))
		}
		return "chat " + op.Model, trace.SpanKindClient, attrs
	case agent.OpTool:
		attrs := append(s.toolAttrs(), sc.str("gen_ai.tool.call.id", op.Call.ID), sc.str(keyConversation, op.SessionID))
		if s.t.content {
			attrs = append(attrs, sc.content("gen_ai.tool.call.arguments", toolArguments(op.Call.Input)))
		}
		return "execute_tool " + op.Call.Name, trace.SpanKindInternal, attrs
	case agent.OpCompact:
		return SpanCompact, trace.SpanKindInternal, []attribute.KeyValue{sc.str(keyConversation, op.SessionID),
			attribute.String("agentrun.compact.trigger", op.Trigger), attribute.String("agentrun.compact.reason", op.Reason),
			attribute.Int("agentrun.compact.turns", op.Turns), attribute.Int("agentrun.compact.kept", op.Keep)}
	case agent.OpCheck:
		return SpanCheck + " " + op.Name, trace.SpanKindInternal, []attribute.KeyValue{sc.str("agentrun.check.name", op.Name),
			sc.str(keyKey, op.Key)}
	}
	return fmt.Sprintf("agentrun.op%d", op.Kind), trace.SpanKindInternal, nil
}

// chatAttrs are the attributes a model call's span and metrics share.
func (s *span) chatAttrs() []attribute.KeyValue {
	op := s.op
	attrs := []attribute.KeyValue{attribute.String(keyOperation, "chat"), attribute.String(keyProvider, providerName(op.Provider)),
		s.sc.str(keyRequestModel, op.Model)}
	if host, port := splitServer(op.Server); host != "" {
		attrs = append(attrs, attribute.String("server.address", host))
		if port > 0 {
			attrs = append(attrs, attribute.Int("server.port", port))
		}
	}
	return attrs
}

// toolAttrs are the attributes a tool call's span and metrics share.
func (s *span) toolAttrs() []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String(keyOperation, "execute_tool"), s.sc.str(keyToolName, s.op.Call.Name),
		attribute.String(keyToolType, "function")}
}

// Retry implements agent.Span: a retry is an event of the model call's span, and
// counted by reason.
func (s *span) Retry(m protocol.Message, voided bool, u protocol.Usage) {
	s.retries++
	reason := retryReason(m.Reason)
	attrs := []attribute.KeyValue{attribute.Int("agentrun.retry.attempt", m.Attempt),
		attribute.Int64("agentrun.retry.delay_ms", m.DelayMS), attribute.String("agentrun.retry.reason", reason),
		s.sc.str("agentrun.retry.message", m.Reason), attribute.Bool("agentrun.attempt.voided", voided)}
	if u != (protocol.Usage{}) {
		attrs = append(attrs, usageAttrs(u)...)
	}
	s.span.AddEvent("agentrun.retry", trace.WithAttributes(attrs...))
	s.t.inst.retries.Add(context.Background(), 1, metric.WithAttributes(attribute.String("agentrun.retry.reason", reason),
		attribute.String(keyProvider, providerName(s.op.Provider)), s.sc.str(keyRequestModel, s.op.Model)))
}

// End implements agent.Span.
func (s *span) End(e agent.SpanEnd) {
	seconds := s.t.now().Sub(s.start).Seconds()
	ctx := context.Background()
	switch s.op.Kind {
	case agent.OpRun:
		s.endRun(ctx, e)
	case agent.OpSession:
		s.endSession(ctx, e.Result, seconds)
	case agent.OpSubAgent:
		s.span.SetAttributes(usageAttrs(e.Usage)...)
		s.span.SetAttributes(attribute.Int("agentrun.session.num_turns", e.Turns))
		s.cost(e.CostUSD, e.CostKnown)
		attrs := []attribute.KeyValue{attribute.String(keyOperation, "invoke_agent"), s.sc.str(keyAgentName, s.op.Name),
			s.sc.str(keyRequestModel, s.op.Model)}
		s.t.inst.agent.Record(ctx, seconds, metric.WithAttributes(append(attrs, s.fail(e.Err)...)...))
	case agent.OpChat:
		s.endChat(ctx, e, seconds)
	case agent.OpTool:
		var failure []attribute.KeyValue
		if e.Tool.IsError {
			failure = s.failAs("tool_error", "the tool returned an error")
		}
		if s.t.content {
			s.span.SetAttributes(s.sc.content("gen_ai.tool.call.result", mustJSON(clip(e.Tool.Content))))
		}
		s.t.inst.tool.Record(ctx, seconds, metric.WithAttributes(append(s.toolAttrs(), failure...)...))
	case agent.OpCompact:
		s.fail(e.Err)
	case agent.OpCheck:
		if c := e.Check; c != nil {
			s.span.SetAttributes(attribute.Int("agentrun.check.exit_code", c.ExitCode), attribute.Bool("agentrun.check.passed", c.Passed))
			if !c.Passed {
				s.failAs("check_failed", fmt.Sprintf("check %s failed (exit code %d)", c.Name, c.ExitCode))
			}
		}
	}
	s.span.End()
}

// endChat closes a model call's span and records its duration and tokens.
func (s *span) endChat(ctx context.Context, e agent.SpanEnd, seconds float64) {
	attrs := append(s.chatAttrs(), s.sc.str(keyResponseModel, s.op.Model))
	s.span.SetAttributes(s.sc.str(keyResponseModel, s.op.Model), attribute.Int("agentrun.retries", s.retries))
	if e.Stop != "" {
		s.span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{string(e.Stop)}))
	}
	s.span.SetAttributes(usageAttrs(e.Usage)...)
	s.cost(e.CostUSD, e.CostKnown)
	if s.t.content {
		s.span.SetAttributes(s.sc.content("gen_ai.output.messages", outputMessages(e.Output, e.Stop)))
	}
	failure := s.fail(e.Err)
	s.t.inst.operation.Record(ctx, seconds, metric.WithAttributes(append(attrs, failure...)...))
	if e.Usage != (protocol.Usage{}) {
		in := e.Usage.Input + e.Usage.CacheRead + e.Usage.CacheCreation
		s.t.inst.tokens.Record(ctx, in, metric.WithAttributes(append(attrs, attribute.String("gen_ai.token.type", "input"))...))
		s.t.inst.tokens.Record(ctx, e.Usage.Output, metric.WithAttributes(append(attrs, attribute.String("gen_ai.token.type", "output"))...))
	}
}

// endSession closes a session attempt's span with its result.
func (s *span) endSession(ctx context.Context, res *protocol.Result, seconds float64) {
	if res == nil {
		return
	}
	provider := providerName(res.Provider)
	attrs := []attribute.KeyValue{attribute.String(keyOperation, "invoke_agent"), s.sc.str(keyAgentName, s.op.Name),
		attribute.String(keyProvider, provider), s.sc.str(keyRequestModel, res.Model)}
	s.span.SetAttributes(attribute.String(keyProvider, provider), s.sc.str(keyRequestModel, res.Model),
		attribute.String(keyStatus, string(res.Status)), attribute.Int("agentrun.session.num_turns", res.NumTurns))
	s.span.SetAttributes(usageAttrs(res.Usage)...)
	if res.TotalCostUSD != nil {
		s.cost(*res.TotalCostUSD, true)
	}
	var failure []attribute.KeyValue
	if res.Status != protocol.StatusSuccess {
		msg := string(res.Status)
		if res.Error != nil {
			msg = res.Error.Message
		}
		failure = s.failAs(string(res.Status), msg)
	}
	s.t.inst.agent.Record(ctx, seconds, metric.WithAttributes(append(attrs, failure...)...))
}

// endRun closes the run's span and counts its sessions by status.
func (s *span) endRun(ctx context.Context, e agent.SpanEnd) {
	failed := 0
	for _, res := range e.Results {
		if res.Status != protocol.StatusSuccess {
			failed++
		}
		s.t.inst.sessions.Add(ctx, 1, metric.WithAttributes(attribute.String(keyStatus, string(res.Status)),
			s.sc.str(keyAgentName, res.JobID)))
	}
	s.span.SetAttributes(attribute.Int("agentrun.run.passed", len(e.Results)-failed), attribute.Int("agentrun.run.failed", failed))
	s.span.SetAttributes(usageAttrs(e.Usage)...)
	s.cost(e.CostUSD, e.CostKnown)
	if failed > 0 {
		s.span.SetStatus(codes.Error, fmt.Sprintf("%d of %d sessions failed", failed, len(e.Results)))
	}
}

// cost records agentrun.cost.usd when it is known.
func (s *span) cost(usd float64, known bool) {
	if known {
		s.span.SetAttributes(attribute.Float64(keyCost, usd))
	}
}

// fail marks the span as failed with e (nothing when e is nil) and returns the
// error.type attribute for its metrics.
func (s *span) fail(e *protocol.Error) []attribute.KeyValue {
	if e == nil {
		return nil
	}
	return s.failAs(string(e.Kind), e.Message)
}

// failAs marks the span as failed with error.type typ (an error kind, a status or a
// word of the conventions' own) and the message msg, and returns the attribute.
func (s *span) failAs(typ, msg string) []attribute.KeyValue {
	a := attribute.String(keyErrorType, errorType(typ))
	s.span.SetAttributes(a)
	s.span.SetStatus(codes.Error, s.sc.redact.String(msg))
	return []attribute.KeyValue{a}
}

// usageAttrs are the token counts of u in the conventions' terms: the input tokens
// include the cached ones, which are also given apart.
func usageAttrs(u protocol.Usage) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.Int64("gen_ai.usage.input_tokens", u.Input+u.CacheRead+u.CacheCreation),
		attribute.Int64("gen_ai.usage.output_tokens", u.Output),
		attribute.Int64("gen_ai.usage.cache_read.input_tokens", u.CacheRead),
		attribute.Int64("gen_ai.usage.cache_creation.input_tokens", u.CacheCreation),
	}
}

// providerName is gen_ai.provider.name of an agentrun provider: the Responses API is
// OpenAI's; the built-in scripted model is named as it is.
func providerName(p string) string {
	switch p {
	case "responses":
		return "openai"
	case "":
		return "_OTHER"
	}
	return p
}

// errorType is error.type of an error kind: the kind itself, a low-cardinality word.
func errorType(kind string) string {
	if kind == "" {
		return "_OTHER"
	}
	return kind
}

// retryReason is the error kind that starts a retry's reason ("overloaded: …").
func retryReason(reason string) string {
	if k, _, ok := strings.Cut(reason, ":"); ok && k != "" && !strings.ContainsAny(k, " \t") {
		return k
	}
	return "_OTHER"
}

// splitServer splits "host:port"; the port is 0 when there is none.
func splitServer(server string) (string, int) {
	host, port, err := net.SplitHostPort(server)
	if err != nil {
		return server, 0
	}
	p, _ := strconv.Atoi(port)
	return host, p
}

package telemetry

import (
	"go.opentelemetry.io/otel/metric"
)

// The metrics: the GenAI conventions' four histograms and agentrun's two counters.
const (
	MetricTokenUsage        = "gen_ai.client.token.usage"
	MetricOperationDuration = "gen_ai.client.operation.duration"
	MetricAgentDuration     = "gen_ai.invoke_agent.duration"
	MetricToolDuration      = "gen_ai.execute_tool.duration"
	MetricSessions          = "agentrun.sessions"
	MetricRetries           = "agentrun.retries"
)

// The conventions' bucket boundaries: tokens in powers of four, seconds in powers of
// two from 10 ms.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// instruments are the metric instruments of a Telemetry.
type instruments struct {
	tokens    metric.Int64Histogram
	operation metric.Float64Histogram
	agent     metric.Float64Histogram
	tool      metric.Float64Histogram
	sessions  metric.Int64Counter
	retries   metric.Int64Counter
}

func newInstruments(m metric.Meter) (instruments, error) {
	var in instruments
	var err error
	if in.tokens, err = m.Int64Histogram(MetricTokenUsage, metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used."),
		metric.WithExplicitBucketBoundaries(tokenBuckets...)); err != nil {
		return in, err
	}
	seconds := func(name, desc string) (metric.Float64Histogram, error) {
		return m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
	}
	if in.operation, err = seconds(MetricOperationDuration, "GenAI operation duration."); err != nil {
		return in, err
	}
	if in.agent, err = seconds(MetricAgentDuration, "Duration of an agent invocation (a session attempt or a sub-agent)."); err != nil {
		return in, err
	}
	if in.tool, err = seconds(MetricToolDuration, "Duration of a tool call."); err != nil {
		return in, err
	}
	if in.sessions, err = m.Int64Counter(MetricSessions, metric.WithUnit("{session}"),
		metric.WithDescription("Sessions that ended, by status.")); err != nil {
		return in, err
	}
	in.retries, err = m.Int64Counter(MetricRetries, metric.WithUnit("{retry}"),
		metric.WithDescription("Model call retries, by reason."))
	return in, err
}

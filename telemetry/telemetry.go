// Package telemetry exports a run as OpenTelemetry traces and metrics over OTLP/HTTP,
// in the GenAI semantic conventions: the run, each session attempt (invoke_agent), each
// model call (chat), tool call (execute_tool), compaction, sub-agent and check is a
// span, and token usage and durations are metrics. It implements the observer that
// the runner and the agent report to, and carries the trace context into tool
// processes, checks and, when a spec asks, model requests. Nothing it meets (an
// unreachable collector, a bad variable) fails or slows a run: it warns, once.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
)

// FlushTimeout bounds the flush at the end of a run (and after SIGTERM): what the
// collector has not taken by then is dropped.
const FlushTimeout = 3 * time.Second

// instrumentation is the name of agentrun's tracer and meter.
const instrumentation = "github.com/agentrun/agentrun"

// Options are the collaborators of a Telemetry.
type Options struct {
	// Log receives the one warning about a failed export [zap.NewNop()].
	Log *zap.Logger
	// Version is service.version.
	Version string
	// Now is the clock of the duration metrics [time.Now].
	Now func() time.Time
}

// Telemetry exports spans and metrics. Create it with New when Config.Enabled, and
// Shutdown it at the end. It is safe for concurrent use.
type Telemetry struct {
	cfg     Config
	log     *zap.Logger
	now     func() time.Time
	tp      *sdktrace.TracerProvider // nil when traces are not exported
	mp      *sdkmetric.MeterProvider // nil when metrics are not exported
	tracer  trace.Tracer
	inst    instruments
	parent  trace.SpanContext // the inbound trace context; invalid when none
	prop    propagation.TraceContext
	content bool
	// transport carries both exporters' requests; Shutdown closes its connections.
	transport *http.Transport

	// closing ends exports still in flight once Shutdown is done.
	closing  context.Context
	cancel   context.CancelFunc
	warn     sync.Once
	shutdown sync.Once
}

// New builds the exporters of cfg. Nothing is sent before the first batch.
func New(cfg Config, opts Options) (*Telemetry, error) {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t := &Telemetry{cfg: cfg, log: opts.Log, now: opts.Now, content: cfg.Content}
	t.closing, t.cancel = context.WithCancel(context.Background())
	attrs := []attribute.KeyValue{attribute.String("service.name", cfg.ServiceName)}
	if opts.Version != "" {
		attrs = append(attrs, attribute.String("service.version", opts.Version))
	}
	for k, v := range cfg.Resource {
		attrs = append(attrs, attribute.String(k, v))
	}
	res, err := resource.New(context.Background(), resource.WithAttributes(attrs...), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	t.transport = http.DefaultTransport.(*http.Transport).Clone()
	hc := &http.Client{Transport: t.transport, Timeout: cfg.Timeout}
	t.tracer = tracenoop.NewTracerProvider().Tracer(instrumentation)
	if cfg.TracesURL != "" {
		exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(cfg.TracesURL), otlptracehttp.WithHTTPClient(hc),
			otlptracehttp.WithHeaders(cfg.TracesHeaders), otlptracehttp.WithTimeout(cfg.Timeout),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
		if err != nil {
			return nil, fmt.Errorf("telemetry: traces: %w", err)
		}
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res),
			sdktrace.WithBatcher(spanExporter{SpanExporter: exp, t: t}, sdktrace.WithExportTimeout(cfg.Timeout)))
		t.tracer = t.tp.Tracer(instrumentation, trace.WithInstrumentationVersion(opts.Version))
	}
	meter := metricnoop.NewMeterProvider().Meter(instrumentation)
	if cfg.MetricsURL != "" {
		exp, err := otlpmetrichttp.New(context.Background(), otlpmetrichttp.WithEndpointURL(cfg.MetricsURL), otlpmetrichttp.WithHTTPClient(hc),
			otlpmetrichttp.WithHeaders(cfg.MetricsHeaders), otlpmetrichttp.WithTimeout(cfg.Timeout),
			otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
		if err != nil {
			return nil, fmt.Errorf("telemetry: metrics: %w", err)
		}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
			sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExporter{Exporter: exp, t: t},
				sdkmetric.WithInterval(cfg.MetricInterval), sdkmetric.WithTimeout(cfg.Timeout))))
		meter = t.mp.Meter(instrumentation, metric.WithInstrumentationVersion(opts.Version))
	}
	if t.inst, err = newInstruments(meter); err != nil {
		return nil, fmt.Errorf("telemetry: metrics: %w", err)
	}
	if cfg.TraceParent != "" {
		carrier := propagation.MapCarrier{"traceparent": cfg.TraceParent, "tracestate": cfg.TraceState}
		t.parent = trace.SpanContextFromContext(t.prop.Extract(context.Background(), carrier))
		if !t.parent.IsValid() {
			t.log.Warn("telemetry: TRACEPARENT is not a W3C traceparent; the run starts a trace of its own")
		}
	}
	return t, nil
}

// Shutdown flushes what is left and stops the exporters, within ctx (FlushTimeout is
// the bound agentrun gives it); later calls do nothing. A failure is warned of, once;
// it is never an error.
func (t *Telemetry) Shutdown(ctx context.Context) {
	t.shutdown.Do(func() { t.shutdownOnce(ctx) })
}

func (t *Telemetry) shutdownOnce(ctx context.Context) {
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, stop := range []func(context.Context) error{t.shutdownTraces, t.shutdownMetrics} {
		wg.Go(func() {
			if err := stop(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.cancel() // an export still waiting on the collector gives up now
	t.transport.CloseIdleConnections()
	if err := errors.Join(errs...); err != nil {
		t.failed(err)
	}
}

func (t *Telemetry) shutdownTraces(ctx context.Context) error {
	if t.tp == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

func (t *Telemetry) shutdownMetrics(ctx context.Context) error {
	if t.mp == nil {
		return nil
	}
	return t.mp.Shutdown(ctx)
}

// failed warns of an export failure, the first only: a collector that is down fails
// every export, and one line says it.
func (t *Telemetry) failed(err error) {
	t.warn.Do(func() {
		t.log.Warn("telemetry: export failed; the run goes on without it (said once)",
			zap.String("traces", t.cfg.TracesURL), zap.String("metrics", t.cfg.MetricsURL), zap.Error(err))
	})
}

// exportContext is ctx, ended too once Shutdown is done.
func (t *Telemetry) exportContext(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(t.closing, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// spanExporter reports failures itself, once, instead of to the SDK's global error
// handler, which would print one line per batch.
type spanExporter struct {
	sdktrace.SpanExporter
	t *Telemetry
}

func (e spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	ctx, done := e.t.exportContext(ctx)
	defer done()
	if err := e.SpanExporter.ExportSpans(ctx, spans); err != nil {
		e.t.failed(err)
	}
	return nil
}

// metricExporter is spanExporter for metrics.
type metricExporter struct {
	sdkmetric.Exporter
	t *Telemetry
}

func (e metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	ctx, done := e.t.exportContext(ctx)
	defer done()
	if err := e.Exporter.Export(ctx, rm); err != nil {
		e.t.failed(err)
	}
	return nil
}

package telemetry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/telemetry"
	"github.com/agentrun/agentrun/testexit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit)) }

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

func TestFromEnv(t *testing.T) {
	cases := []struct {
		name     string
		env      map[string]string
		want     telemetry.Config // compared field by field below
		warnings []string         // substrings, one per warning
	}{
		{name: "nothing set", env: map[string]string{"PATH": "/bin"}},
		{name: "an endpoint turns both signals on",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"},
			want: telemetry.Config{TracesURL: "http://collector:4318/v1/traces", MetricsURL: "http://collector:4318/v1/metrics"}},
		{name: "the exporter variable alone uses the default endpoint",
			env:  map[string]string{"OTEL_TRACES_EXPORTER": "otlp"},
			want: telemetry.Config{TracesURL: "http://localhost:4318/v1/traces"}},
		{name: "none turns a signal off",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none"},
			want: telemetry.Config{TracesURL: "http://c:4318/v1/traces"}},
		{name: "a signal's own endpoint is used as it is",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://traces.example/ingest", "OTEL_METRICS_EXPORTER": "none"},
			want: telemetry.Config{TracesURL: "https://traces.example/ingest"}},
		{name: "disabled wins",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}},
		{name: "an unsupported exporter is said",
			env:      map[string]string{"OTEL_TRACES_EXPORTER": "console,otlp", "OTEL_METRICS_EXPORTER": "prometheus"},
			want:     telemetry.Config{TracesURL: "http://localhost:4318/v1/traces"},
			warnings: []string{`OTEL_TRACES_EXPORTER: exporter "console" is not supported`, `OTEL_METRICS_EXPORTER: exporter "prometheus" is not supported`}},
		{name: "grpc is not supported",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			warnings: []string{"only http/protobuf is supported; traces", "only http/protobuf is supported; metrics"}},
		{name: "a signal's protocol wins",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"},
			want:     telemetry.Config{TracesURL: "http://c:4318/v1/traces"},
			warnings: []string{"metrics are not exported"}},
		{name: "a bad endpoint",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
			warnings: []string{"OTEL_EXPORTER_OTLP_ENDPOINT: want an http:// or https:// URL", "OTEL_EXPORTER_OTLP_ENDPOINT: want an http://"}},
		{name: "headers, the signal's over the common ones",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "x-team=abc, authorization=Bearer%20tok",
				"OTEL_EXPORTER_OTLP_METRICS_HEADERS": "x-team=def"},
			want: telemetry.Config{TracesURL: "http://c:4318/v1/traces", MetricsURL: "http://c:4318/v1/metrics",
				TracesHeaders:  map[string]string{"x-team": "abc", "authorization": "Bearer tok"},
				MetricsHeaders: map[string]string{"x-team": "def", "authorization": "Bearer tok"}}},
		{name: "bad headers name the entry, not its value",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=1,secret-without-equals", "OTEL_METRICS_EXPORTER": "none"},
			warnings: []string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS: entry 2 is not key=value; traces are not exported"}},
		{name: "service name and resource",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_RESOURCE_ATTRIBUTES": "service.name=ci,deployment.environment=staging",
				"OTEL_SERVICE_NAME": "nightly", "OTEL_METRIC_EXPORT_INTERVAL": "1500", "OTEL_EXPORTER_OTLP_TIMEOUT": "2000"},
			want: telemetry.Config{TracesURL: "http://c:4318/v1/traces", MetricsURL: "http://c:4318/v1/metrics", ServiceName: "nightly",
				Resource: map[string]string{"deployment.environment": "staging"}, MetricInterval: 1500 * time.Millisecond, Timeout: 2 * time.Second}},
		{name: "bad numbers keep the defaults",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TIMEOUT": "5s"},
			want:     telemetry.Config{TracesURL: "http://c:4318/v1/traces", MetricsURL: "http://c:4318/v1/metrics"},
			warnings: []string{`OTEL_EXPORTER_OTLP_TIMEOUT="5s": want a positive number of milliseconds; using 10s`}},
		{name: "content and the inbound trace context",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "AGENTRUN_OTEL_CONTENT": "1",
				"TRACEPARENT": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "TRACESTATE": "vendor=x"},
			want: telemetry.Config{TracesURL: "http://c:4318/v1/traces", MetricsURL: "http://c:4318/v1/metrics", Content: true,
				TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", TraceState: "vendor=x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, warnings := telemetry.FromEnv(lookup(c.env))
			require.Len(t, warnings, len(c.warnings), "%q", warnings)
			for i, w := range c.warnings {
				assert.Contains(t, warnings[i], w)
			}
			assert.Equal(t, c.want.TracesURL, got.TracesURL)
			assert.Equal(t, c.want.MetricsURL, got.MetricsURL)
			assert.Equal(t, c.want.Enabled(), got.Enabled())
			if !c.want.Enabled() {
				assert.Equal(t, telemetry.Config{}, got, "off is the zero Config")
				return
			}
			assert.Equal(t, c.want.Content, got.Content)
			assert.Equal(t, c.want.TraceParent, got.TraceParent)
			assert.Equal(t, c.want.TraceState, got.TraceState)
			if c.want.TracesHeaders != nil {
				assert.Equal(t, c.want.TracesHeaders, got.TracesHeaders)
				assert.Equal(t, c.want.MetricsHeaders, got.MetricsHeaders)
			}
			want := c.want
			if want.ServiceName == "" {
				want.ServiceName = "agentrun"
			}
			if want.Timeout == 0 {
				want.Timeout = 10 * time.Second
			}
			if want.MetricInterval == 0 {
				want.MetricInterval = time.Minute
			}
			assert.Equal(t, want.ServiceName, got.ServiceName)
			assert.Equal(t, want.Timeout, got.Timeout)
			assert.Equal(t, want.MetricInterval, got.MetricInterval)
			if want.Resource != nil {
				assert.Equal(t, want.Resource, got.Resource)
			}
		})
	}
}

// TestHeaderValuesAreSecrets checks that no warning quotes a header and that the header
// values are among the values to mask.
func TestHeaderValuesAreSecrets(t *testing.T) {
	cfg, warnings := telemetry.FromEnv(lookup(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
		"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20s3cr3t", "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "k=v,=s3cr3t-too"}))
	require.Len(t, warnings, 1)
	assert.NotContains(t, warnings[0], "s3cr3t")
	assert.Equal(t, []string{"Bearer s3cr3t"}, cfg.Secrets())
}

func TestParseList(t *testing.T) {
	cases := []struct {
		name    string
		give    string
		want    []telemetry.KeyValue
		wantErr string
	}{
		{name: "empty", give: ""},
		{name: "entries", give: " a=1 ,b = two%20words,,c=x=y", want: []telemetry.KeyValue{{Key: "a", Value: "1"}, {Key: "b", Value: "two words"}, {Key: "c", Value: "x=y"}}},
		{name: "empty value", give: "a=", want: []telemetry.KeyValue{{Key: "a", Value: ""}}},
		{name: "no equals", give: "a=one,b", want: []telemetry.KeyValue{{Key: "a", Value: "one"}}, wantErr: "entry 2 is not key=value"},
		{name: "empty key", give: "=hidden", wantErr: "entry 1 is not key=value"},
		{name: "space in key", give: "a b=hidden", wantErr: "entry 1 has a key with a space"},
		{name: "bad escape", give: "a=%zz", wantErr: "entry 1 has a bad %-escape"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := telemetry.ParseList(c.give)
			assert.Equal(t, c.want, got)
			if c.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.wantErr)
			for _, kv := range strings.Split(c.give, ",") {
				if _, v, ok := strings.Cut(kv, "="); ok && v != "" {
					assert.NotContains(t, err.Error(), v, "the error does not quote a value")
				}
			}
		})
	}
}

package telemetry

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is what the standard OpenTelemetry variables ask for. The zero Config exports
// nothing.
type Config struct {
	// TracesURL and MetricsURL are the OTLP/HTTP endpoints of the signals exported,
	// empty for a signal that is not; Headers go with every export of each.
	TracesURL, MetricsURL         string
	TracesHeaders, MetricsHeaders map[string]string
	// Timeout bounds one export.
	Timeout time.Duration
	// MetricInterval is the time between two exports of the metrics.
	MetricInterval time.Duration
	// ServiceName is service.name; Resource holds the other resource attributes.
	ServiceName string
	Resource    map[string]string
	// Content records the GenAI content attributes (messages, tool arguments and
	// results), redacted (AGENTRUN_OTEL_CONTENT=1).
	Content bool
	// TraceParent and TraceState are the inbound trace context, which parents the run.
	TraceParent, TraceState string
}

// Enabled reports whether anything is exported.
func (c Config) Enabled() bool { return c.TracesURL != "" || c.MetricsURL != "" }

// Secrets are the values of the export headers, which often hold credentials: they are
// masked wherever agentrun writes.
func (c Config) Secrets() []string {
	var out []string
	for _, h := range []map[string]string{c.TracesHeaders, c.MetricsHeaders} {
		for _, v := range h {
			if v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// Defaults of the specification.
const (
	defaultEndpoint       = "http://localhost:4318"
	defaultTimeout        = 10 * time.Second
	defaultMetricInterval = 60 * time.Second
	defaultServiceName    = "agentrun"
)

// FromEnv reads the configuration from the standard variables (OTEL_SDK_DISABLED,
// OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS,
// _PROTOCOL and _TIMEOUT with their per-signal forms, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_METRIC_EXPORT_INTERVAL), the inbound trace context
// (TRACEPARENT, TRACESTATE) and AGENTRUN_OTEL_CONTENT. A signal is exported when its
// exporter variable names otlp, or when it is unset and an endpoint is set: with none
// of them set nothing is. A problem never fails a run: it is returned as a warning
// naming the variable, and the signal it concerns is not exported. No warning quotes a
// header value.
func FromEnv(lookup func(string) (string, bool)) (Config, []string) {
	r := envReader{lookup: lookup}
	if v, _ := r.get("OTEL_SDK_DISABLED"); strings.EqualFold(strings.TrimSpace(v), "true") {
		return Config{}, nil
	}
	var c Config
	c.TracesURL, c.TracesHeaders = r.signal("TRACES", "/v1/traces")
	c.MetricsURL, c.MetricsHeaders = r.signal("METRICS", "/v1/metrics")
	c.Timeout = r.millis("OTEL_EXPORTER_OTLP_TIMEOUT", defaultTimeout)
	c.MetricInterval = r.millis("OTEL_METRIC_EXPORT_INTERVAL", defaultMetricInterval)
	c.Resource = map[string]string{}
	if v, ok := r.get("OTEL_RESOURCE_ATTRIBUTES"); ok {
		kvs, err := ParseList(v)
		if err != nil {
			r.warnf("OTEL_RESOURCE_ATTRIBUTES: %v; the resource attributes are left out", err)
		}
		for _, kv := range kvs {
			c.Resource[kv.Key] = kv.Value
		}
	}
	c.ServiceName = defaultServiceName
	if v := c.Resource["service.name"]; v != "" {
		c.ServiceName = v
	}
	delete(c.Resource, "service.name")
	if v, _ := r.get("OTEL_SERVICE_NAME"); strings.TrimSpace(v) != "" {
		c.ServiceName = strings.TrimSpace(v)
	}
	c.TraceParent, _ = r.get("TRACEPARENT")
	c.TraceState, _ = r.get("TRACESTATE")
	v, _ := r.get("AGENTRUN_OTEL_CONTENT")
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false":
	case "1", "true":
		c.Content = true
	default:
		r.warnf("AGENTRUN_OTEL_CONTENT=%q: want 1 or 0; content is not recorded", v)
	}
	if !c.Enabled() {
		return Config{}, r.warnings
	}
	return c, r.warnings
}

// envReader reads variables and collects warnings.
type envReader struct {
	lookup   func(string) (string, bool)
	warnings []string
}

func (r *envReader) get(name string) (string, bool) {
	v, ok := r.lookup(name)
	return v, ok && v != ""
}

func (r *envReader) warnf(format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// signal returns the endpoint and headers of one signal (TRACES or METRICS), or an
// empty endpoint when the signal is not exported.
func (r *envReader) signal(name, path string) (string, map[string]string) {
	exporter := "OTEL_" + name + "_EXPORTER"
	v, set := r.get(exporter)
	own, ownSet := r.get("OTEL_EXPORTER_OTLP_" + name + "_ENDPOINT")
	base, baseSet := r.get("OTEL_EXPORTER_OTLP_ENDPOINT")
	on := ownSet || baseSet
	if set {
		on = false
		for _, e := range strings.Split(v, ",") {
			switch e = strings.ToLower(strings.TrimSpace(e)); e {
			case "otlp":
				on = true
			case "none", "":
			default:
				r.warnf("%s: exporter %q is not supported (only otlp and none are)", exporter, e)
			}
		}
	}
	if !on {
		return "", nil
	}
	proto := "http/protobuf"
	if p, ok := r.get("OTEL_EXPORTER_OTLP_" + name + "_PROTOCOL"); ok {
		proto = p
	} else if p, ok := r.get("OTEL_EXPORTER_OTLP_PROTOCOL"); ok {
		proto = p
	}
	if strings.TrimSpace(proto) != "http/protobuf" {
		r.warnf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: only http/protobuf is supported; %s are not exported", proto, strings.ToLower(name))
		return "", nil
	}
	endpoint, variable := strings.TrimSpace(own), "OTEL_EXPORTER_OTLP_"+name+"_ENDPOINT"
	if !ownSet {
		b := defaultEndpoint
		if baseSet {
			b, variable = strings.TrimSpace(base), "OTEL_EXPORTER_OTLP_ENDPOINT"
		}
		endpoint = strings.TrimRight(b, "/") + path
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		r.warnf("%s: want an http:// or https:// URL with a host; %s are not exported", variable, strings.ToLower(name))
		return "", nil
	}
	headers := map[string]string{}
	for _, variable := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_" + name + "_HEADERS"} {
		v, ok := r.get(variable)
		if !ok {
			continue
		}
		kvs, err := ParseList(v)
		if err != nil {
			r.warnf("%s: %v; %s are not exported", variable, err, strings.ToLower(name))
			return "", nil
		}
		for _, kv := range kvs {
			headers[kv.Key] = kv.Value
		}
	}
	return endpoint, headers
}

// millis reads a duration in milliseconds.
func (r *envReader) millis(name string, def time.Duration) time.Duration {
	v, ok := r.get(name)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 || n > int64(24*time.Hour/time.Millisecond) {
		r.warnf("%s=%q: want a positive number of milliseconds; using %s", name, v, def)
		return def
	}
	return time.Duration(n) * time.Millisecond
}

// KeyValue is one entry of a list variable.
type KeyValue struct {
	Key, Value string
}

// ParseList parses the key=value lists of OTEL_EXPORTER_OTLP_HEADERS and
// OTEL_RESOURCE_ATTRIBUTES: entries separated by commas, space around keys and values
// ignored, values percent-decoded, empty entries skipped. A bad entry is an error that
// says which entry it is, never what it holds (a header may be a credential); the
// entries before it are returned.
func ParseList(s string) ([]KeyValue, error) {
	var out []KeyValue
	for i, entry := range strings.Split(s, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, v, ok := strings.Cut(entry, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return out, fmt.Errorf("entry %d is not key=value", i+1)
		}
		if strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '%' }) {
			return out, fmt.Errorf("entry %d has a key with a space, a control character or %%", i+1)
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return out, fmt.Errorf("entry %d has a bad %%-escape in its value", i+1)
		}
		out = append(out, KeyValue{Key: k, Value: val})
	}
	return out, nil
}

// FormatList writes entries as ParseList reads them.
func FormatList(kvs []KeyValue) string {
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = kv.Key + "=" + escapeValue(kv.Value)
	}
	return strings.Join(parts, ",")
}

// escapeValue percent-encodes what ParseList would not read back as it is: the
// percent sign, the comma, and space and control characters.
func escapeValue(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '%' || c == ',' || c <= ' ' || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

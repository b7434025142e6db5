// Package otlptest is an OTLP/HTTP receiver for tests: an httptest server that decodes
// what it receives with the official protobuf types of the OpenTelemetry protocol and
// keeps it, raw bytes included.
package otlptest

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver receives traces at /v1/traces and metrics at /v1/metrics.
type Receiver struct {
	// URL is the base URL, for OTEL_EXPORTER_OTLP_ENDPOINT.
	URL string
	srv *httptest.Server

	mu      sync.Mutex
	traces  []*coltracepb.ExportTraceServiceRequest
	metrics []*colmetricpb.ExportMetricsServiceRequest
	bodies  [][]byte
	headers []http.Header
	errs    []error
}

// NewReceiver starts a receiver on a loopback port; Close stops it.
func NewReceiver() *Receiver {
	r := &Receiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var msg coltracepb.ExportTraceServiceRequest
		if r.decode(w, req, &msg) {
			r.mu.Lock()
			r.traces = append(r.traces, &msg)
			r.mu.Unlock()
			r.reply(w, &coltracepb.ExportTraceServiceResponse{})
		}
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var msg colmetricpb.ExportMetricsServiceRequest
		if r.decode(w, req, &msg) {
			r.mu.Lock()
			r.metrics = append(r.metrics, &msg)
			r.mu.Unlock()
			r.reply(w, &colmetricpb.ExportMetricsServiceResponse{})
		}
	})
	r.srv = httptest.NewServer(mux)
	r.URL = r.srv.URL
	return r
}

// Close stops the server.
func (r *Receiver) Close() { r.srv.Close() }

func (r *Receiver) decode(w http.ResponseWriter, req *http.Request, msg proto.Message) bool {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			r.fail(w, fmt.Errorf("%s: gzip: %w", req.URL.Path, err))
			return false
		}
		defer func() { _ = zr.Close() }()
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		r.fail(w, fmt.Errorf("%s: read: %w", req.URL.Path, err))
		return false
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		r.fail(w, fmt.Errorf("%s: content type %q, want application/x-protobuf", req.URL.Path, ct))
		return false
	}
	if err := proto.Unmarshal(raw, msg); err != nil {
		r.fail(w, fmt.Errorf("%s: decode: %w", req.URL.Path, err))
		return false
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, raw)
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	return true
}

func (r *Receiver) fail(w http.ResponseWriter, err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	http.Error(w, err.Error(), http.StatusBadRequest)
}

func (r *Receiver) reply(w http.ResponseWriter, msg proto.Message) {
	b, err := proto.Marshal(msg)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// Errors are the requests the receiver could not decode.
func (r *Receiver) Errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// Bodies are the raw (decompressed) bodies of every request received.
func (r *Receiver) Bodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

// Headers are the headers of every request received.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Span is one received span with the attributes of its resource.
type Span struct {
	*tracepb.Span
	Resource map[string]any
}

// Attrs returns the span's attributes by key.
func (s Span) Attrs() map[string]any { return Attrs(s.Attributes) }

// Spans returns every span received, in the order received.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Span
	for _, req := range r.traces {
		for _, rs := range req.ResourceSpans {
			res := Attrs(rs.GetResource().GetAttributes())
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					out = append(out, Span{Span: s, Resource: res})
				}
			}
		}
	}
	return out
}

// Metrics returns the last received state of each metric by name: with cumulative
// temporality it holds everything recorded.
func (r *Receiver) Metrics() map[string]*metricpb.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]*metricpb.Metric{}
	for _, req := range r.metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					out[m.Name] = m
				}
			}
		}
	}
	return out
}

// Attrs returns attributes by key: strings, int64s, float64s, bools, and slices of
// them for arrays.
func Attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = value(kv.Value)
	}
	return out
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}

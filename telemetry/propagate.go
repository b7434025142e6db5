package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// ProcessEnv implements runner.Telemetry: the W3C trace context of the span in ctx as
// the variables a process reads it from (TRACEPARENT, and TRACESTATE when there is
// one); nothing when ctx has no span.
func (t *Telemetry) ProcessEnv(ctx context.Context) []string {
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	tp := carrier.Get("traceparent")
	if tp == "" {
		return nil
	}
	env := []string{"TRACEPARENT=" + tp}
	if ts := carrier.Get("tracestate"); ts != "" {
		env = append(env, "TRACESTATE="+ts)
	}
	return env
}

// Transport returns next with the trace context of each request's span added to it
// (traceparent, tracestate), for the model requests of a spec that asks for it
// (telemetry.propagate_to_provider).
func (t *Telemetry) Transport(next http.RoundTripper) http.RoundTripper {
	return &propagating{next: next, prop: t.prop}
}

// propagating is an http.RoundTripper that sends the trace context along.
type propagating struct {
	next http.RoundTripper
	prop propagation.TraceContext
}

func (p *propagating) RoundTrip(req *http.Request) (*http.Response, error) {
	carrier := propagation.HeaderCarrier(http.Header{})
	p.prop.Inject(req.Context(), carrier)
	if len(carrier) == 0 {
		return p.next.RoundTrip(req)
	}
	out := req.Clone(req.Context()) // a RoundTripper must not change the request it is given
	for k, v := range carrier {
		out.Header[k] = v
	}
	return p.next.RoundTrip(out)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the transport.
func (p *propagating) CloseIdleConnections() {
	if c, ok := p.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

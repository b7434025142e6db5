package main

import (
	"context"
	"net"
	"net/url"

	"go.uber.org/zap"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/telemetry"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/openai"
)

var _ runner.Telemetry = (*telemetry.Telemetry)(nil)

// newTelemetry starts the OpenTelemetry export that the OTEL_* variables ask for, and
// returns the values it must keep secret (its export headers). It returns nil when
// they ask for none; a problem is a warning, never an error: telemetry does not stop a
// run.
func (a *App) newTelemetry(log *zap.Logger) (*telemetry.Telemetry, []string) {
	cfg, warnings := telemetry.FromEnv(a.lookupEnv)
	for _, w := range warnings {
		log.Warn("telemetry: " + w)
	}
	if !cfg.Enabled() {
		return nil, nil
	}
	t, err := telemetry.New(cfg, telemetry.Options{Log: log, Version: version()})
	if err != nil {
		log.Warn("telemetry: nothing is exported", zap.Error(err))
		return nil, cfg.Secrets()
	}
	return t, cfg.Secrets()
}

// flushTelemetry sends what the run has not yet exported, within telemetry.FlushTimeout.
func flushTelemetry(t *telemetry.Telemetry) {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetry.FlushTimeout)
	defer cancel()
	t.Shutdown(ctx)
}

// serverOf is the host and port a provider choice talks to, for the spans of its model
// calls; empty for the in-process scripted model.
func serverOf(c providerChoice) string {
	base := c.baseURL
	switch {
	case c.name == "scripted":
		return ""
	case base != "":
	case c.name == "anthropic":
		base = anthropic.DefaultBaseURL
	default:
		base = openai.DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

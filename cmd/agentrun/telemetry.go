package main

import (
	"context"

	"go.uber.org/zap"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/telemetry"
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

package runner

import (
	"context"
	"path/filepath"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
)

// Telemetry observes a run as traces and metrics (package telemetry, which cmd wires
// in): the runner reports the run, each session attempt and each check to it, and the
// agent its model calls, tool calls, compactions and sub-agents. Options.Telemetry nil
// observes nothing, at the cost of a nil check.
type Telemetry interface {
	agent.Observer
	// ProcessEnv returns the variables that carry the span of ctx into a process it
	// starts: TRACEPARENT, and TRACESTATE when there is one.
	ProcessEnv(ctx context.Context) []string
}

// startRun opens the run's span; secrets are every value the run masks.
func (r *Runner) startRun(ctx context.Context, spec *jobs.Spec, sessions int, secrets []string) (context.Context, agent.Span) {
	if r.opts.Telemetry == nil {
		return ctx, nil
	}
	return r.opts.Telemetry.Start(ctx, agent.Op{Kind: agent.OpRun, Name: filepath.Base(spec.File()), Sessions: sessions,
		Secrets: secrets})
}

// endRun closes the run's span with the results of the sessions it started.
func (st *runState) endRun(span agent.Span) {
	if span == nil {
		return
	}
	end := agent.SpanEnd{CostKnown: true}
	for _, res := range st.results {
		if res == nil {
			continue
		}
		end.Results = append(end.Results, res)
		end.Usage = end.Usage.Add(res.Usage)
		if res.TotalCostUSD != nil {
			end.CostUSD += *res.TotalCostUSD
		} else {
			end.CostKnown = false
		}
	}
	span.End(end)
}

// startSession opens the span of one session attempt, whose result is res.
func (st *runState) startSession(ctx context.Context, s jobs.Session, res *protocol.Result) (context.Context, agent.Span) {
	if st.r.opts.Telemetry == nil {
		return ctx, nil
	}
	return st.r.opts.Telemetry.Start(ctx, agent.Op{Kind: agent.OpSession, Name: s.JobID, Key: s.Key,
		SessionID: res.SessionID, Attempt: res.Attempt, Provider: res.Provider, Model: res.Model,
		Secrets: st.secretsFor(s)})
}

// startCheck opens the span of one check.
func (st *runState) startCheck(ctx context.Context, s jobs.Session, name string) (context.Context, agent.Span) {
	if st.r.opts.Telemetry == nil {
		return ctx, nil
	}
	return st.r.opts.Telemetry.Start(ctx, agent.Op{Kind: agent.OpCheck, Name: name, Key: s.Key})
}

package runner

import (
	"fmt"
	"strings"

	"github.com/agentrun/agentrun/jobs"
)

// DryRun describes a plan: the sessions that would run, those an earlier run already
// settled, and the most the run could cost.
func DryRun(spec *jobs.Spec, p *Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "spec %s: %d sessions, %d selected, concurrency %d\n", spec.File(), len(p.All), len(p.Run)+len(p.Reused), p.Concurrency)
	if p.Excluded > 0 {
		fmt.Fprintf(&b, "%s left out by --filter or --shard\n", countSessions(p.Excluded))
	}
	var ceiling float64
	unbounded := 0
	b.WriteString("\nwould run:\n")
	if len(p.Run) == 0 {
		b.WriteString("  (nothing)\n")
	}
	for _, s := range p.Run {
		limit := "no cost limit"
		switch {
		case s.Settings.Budget.MaxCostUSD > 0:
			ceiling += s.Settings.Budget.MaxCostUSD
			limit = fmt.Sprintf("≤ $%.4f", s.Settings.Budget.MaxCostUSD)
		default:
			unbounded++
		}
		fmt.Fprintf(&b, "  %-50s provider=%s model=%s max_turns=%d timeout=%s bash_mode=%s sandbox=%s %s\n", s.Key,
			orDefault(string(s.Settings.Provider), "auto"), orDefault(s.Settings.Model, "default"),
			s.Settings.MaxTurns, s.Settings.Timeout, s.Settings.BashMode,
			orDefault(string(s.Settings.Sandbox.Level), "best"), limit)
	}
	if len(p.Reused) > 0 {
		b.WriteString("\nsettled by an earlier run (skipped):\n")
		for _, r := range p.Reused {
			fmt.Fprintf(&b, "  %-50s %s\n", r.Key, r.Status)
		}
	}
	b.WriteString("\ncost ceiling: ")
	switch {
	case spec.Budget.MaxCostUSD > 0 && (unbounded > 0 || spec.Budget.MaxCostUSD < ceiling):
		fmt.Fprintf(&b, "$%.4f (the run-level budget)\n", spec.Budget.MaxCostUSD)
	case unbounded == 1:
		b.WriteString("unbounded: 1 session has no budget.max_cost_usd and the run has no budget\n")
	case unbounded > 0:
		fmt.Fprintf(&b, "unbounded: %d sessions have no budget.max_cost_usd and the run has no budget\n", unbounded)
	default:
		fmt.Fprintf(&b, "$%.4f (the sum of the sessions' budgets)\n", ceiling)
	}
	return b.String()
}

// countSessions is "1 session" or "N sessions".
func countSessions(n int) string {
	if n == 1 {
		return "1 session"
	}
	return fmt.Sprintf("%d sessions", n)
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

package runner

import (
	"fmt"
	"strings"

	"github.com/agentrun/agentrun/jobs"
)

// DryRun describes a plan: the sessions that would run with their provider and model
// (as resolved, when the plan has them), those an earlier run already settled, the most
// the run could cost, and warnings about budgets that cannot hold.
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
	for i, s := range p.Run {
		limit := "no cost limit"
		switch {
		case s.Settings.Budget.MaxCostUSD > 0:
			ceiling += s.Settings.Budget.MaxCostUSD
			limit = fmt.Sprintf("≤ $%.4f", s.Settings.Budget.MaxCostUSD)
		default:
			unbounded++
		}
		info := planned(p, i)
		fmt.Fprintf(&b, "  %-50s provider=%s model=%s max_turns=%d timeout=%s bash_mode=%s sandbox=%s %s\n", s.Key,
			orDefault(info.Name, "auto"), orDefault(info.Model, "default"),
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
	for _, w := range budgetWarnings(spec, p) {
		b.WriteString("warning: " + w + "\n")
	}
	return b.String()
}

// planned is the provider and model of session i of p.Run: as resolved, else as the
// spec writes them.
func planned(p *Plan, i int) ProviderInfo {
	if i < len(p.Resolved) {
		return p.Resolved[i]
	}
	s := p.Run[i]
	return ProviderInfo{Name: string(s.Settings.Provider), Model: s.Settings.Model}
}

// budgetWarnings says when the budgets of a plan cannot hold: the run's budget is below
// the budget of every session, so that none would start; or a model has no price, so
// that no budget counts what its sessions spend.
func budgetWarnings(spec *jobs.Spec, p *Plan) []string {
	var out []string
	runCap := spec.Budget.MaxCostUSD
	if runCap > 0 && len(p.Run) > 0 {
		least := 0.0
		for _, s := range p.Run {
			c := s.Settings.Budget.MaxCostUSD
			if c <= runCap {
				least = 0
				break
			}
			if least == 0 || c < least {
				least = c
			}
		}
		if least > 0 {
			out = append(out, fmt.Sprintf("the run budget ($%.4f) is below the budget of every session (the smallest is $%.4f): the run would start none of them", runCap, least))
		}
	}
	var order []ProviderInfo
	priced := map[ProviderInfo]bool{}
	unpriced := map[ProviderInfo]int{}
	for i, s := range p.Run {
		m := planned(p, i)
		if m.Model == "" || runCap <= 0 && s.Settings.Budget.MaxCostUSD <= 0 {
			continue // no model to price, or no budget to enforce
		}
		known, seen := priced[m]
		if !seen {
			_, known = spec.Price(pricedAs(spec, m.Name, m.Model))
			priced[m] = known
			if !known {
				order = append(order, m)
			}
		}
		if !known {
			unpriced[m]++
		}
	}
	for _, m := range order {
		on := ""
		if m.Name != "" {
			on = " (" + m.Name + ")"
		}
		out = append(out, fmt.Sprintf("model %s%s has no price: the budget cannot be enforced for its %s; give it a price under prices:",
			m.Model, on, countSessions(unpriced[m])))
	}
	return out
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

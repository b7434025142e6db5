package runner

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
)

// SummarySchemaVersion is the version of summary.json.
const SummarySchemaVersion = 1

// Summary is summary.json: one row per session and the run's totals.
type Summary struct {
	SchemaVersion  int    `json:"schema_version"`
	Spec           string `json:"spec"`
	SpecDigest     string `json:"spec_digest"`
	SessionsDigest string `json:"sessions_digest"`
	// Shard is "I/N" for a sharded run; Shards lists the shards a merged summary joined.
	Shard      string   `json:"shard,omitempty"`
	Shards     []string `json:"shards,omitempty"`
	StartedAt  string   `json:"started_at"`
	EndedAt    string   `json:"ended_at"`
	DurationMS int64    `json:"duration_ms"`
	// Version is the agentrun build that wrote the summary (run.json's version).
	Version string `json:"version,omitempty"`
	// Warnings are what makes the results less than they look (the scripted model ran
	// for want of an API key, tools ran without the sandbox): summary.md shows each as
	// a banner and GitHub Actions as a warning.
	Warnings []string `json:"warnings,omitempty"`
	Totals   Totals   `json:"totals"`
	Sessions []Row    `json:"sessions"`
	// Aggregates are computed from Sessions.
	Aggregates Aggregates `json:"aggregates"`
}

// Totals add up the sessions of a run.
type Totals struct {
	Sessions int                     `json:"sessions"`
	Passed   int                     `json:"passed"`
	Failed   int                     `json:"failed"`
	Reused   int                     `json:"reused"`
	ByStatus map[protocol.Status]int `json:"by_status"`
	Usage    protocol.Usage          `json:"usage"`
	Tokens   int64                   `json:"tokens"`
	// CostUSD sums the sessions with a known cost; CostComplete is false when some
	// session's cost is unknown (null): its model had no price, or it crashed mid-run.
	CostUSD      float64 `json:"cost_usd"`
	CostComplete bool    `json:"cost_complete"`
	// ThrottledMS is how long providers were paused by rate limits and overloads.
	ThrottledMS    int64 `json:"throttled_ms"`
	ThrottlePauses int   `json:"throttle_pauses"`
	// PacedMS is how long requests were held back to stay within the providers' rate
	// limits (their rate-limit headers) and the in-flight limit a 429 shrinks.
	PacedMS int64 `json:"paced_ms"`
	// BudgetExhausted is true when the run-level budget stopped or refused sessions.
	BudgetExhausted bool `json:"budget_exhausted"`
}

// Row is one session in summary.json.
type Row struct {
	Key   string `json:"key"`
	JobID string `json:"job_id"`
	// Provider, Model, Matrix, Repeat, Attempt and Version say what produced the
	// session, as its result.json does.
	protocol.Provenance
	SessionID  string          `json:"session_id"`
	Status     protocol.Status `json:"status"`
	IsError    bool            `json:"is_error"`
	NumTurns   int             `json:"num_turns"`
	DurationMS int64           `json:"duration_ms"`
	Usage      protocol.Usage  `json:"usage"`
	CostUSD    *float64        `json:"cost_usd"`
	Attempts   int             `json:"attempts"`
	Checks     []CheckRow      `json:"checks,omitempty"`
	Error      *protocol.Error `json:"error,omitempty"`
	// Failure explains why the session failed (the reports show it).
	Failure *Failure `json:"failure,omitempty"`
	// Reused marks a result kept from an earlier run by --resume.
	Reused bool `json:"reused,omitempty"`
	// Sandbox is the level the session's tools ran at.
	Sandbox string `json:"sandbox,omitempty"`
	// Line is the line of the session's job in the spec file; 0 when unknown.
	Line int `json:"line,omitempty"`
	// SessionDir is the session's folder, relative to the summary's folder and
	// slash-separated, when it is not sessions/<key>: a merged summary's sessions stay
	// in the shards' folders.
	SessionDir string `json:"session_dir,omitempty"`
}

// failure is the row's explanation; a row of a summary.json written before rows had
// one (an older shard's, read by merge) gets one made from its status and error.
func (r Row) failure() *Failure {
	if r.Failure != nil || r.Status == protocol.StatusSuccess {
		return r.Failure
	}
	return explain(&protocol.Result{Status: r.Status, Error: r.Error})
}

// CheckRow is one check in a summary row.
type CheckRow struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
}

// RunInfo is run.json.
type RunInfo struct {
	SchemaVersion  int      `json:"schema_version"`
	Spec           string   `json:"spec"`
	SpecDigest     string   `json:"spec_digest"`
	SessionsDigest string   `json:"sessions_digest"`
	SessionsTotal  int      `json:"sessions_total"`
	Selected       []string `json:"selected"`
	Shard          *Shard   `json:"shard,omitempty"`
	Filter         string   `json:"filter,omitempty"`
	Version        string   `json:"version"`
	GoVersion      string   `json:"go_version"`
	StartedAt      string   `json:"started_at"`
	EndedAt        string   `json:"ended_at,omitempty"`
}

func (r *Runner) runInfo(spec *jobs.Spec, plan *Plan, start time.Time) *RunInfo {
	info := &RunInfo{SchemaVersion: 1, Spec: spec.File(), SpecDigest: plan.SpecDigest,
		SessionsDigest: plan.SessionsDigest, SessionsTotal: len(plan.All), Version: r.opts.Version,
		GoVersion: runtime.Version(), StartedAt: start.UTC().Format(time.RFC3339), Selected: []string{}}
	for _, s := range plan.Run {
		info.Selected = append(info.Selected, s.Key)
	}
	for _, res := range plan.Reused {
		info.Selected = append(info.Selected, res.Key)
	}
	sort.Strings(info.Selected)
	info.Filter = r.opts.Filter
	if r.opts.Shard.Total > 0 {
		sh := r.opts.Shard
		info.Shard = &sh
	}
	return info
}

// newSummary builds the summary of results (sorted by key).
func newSummary(spec *jobs.Spec, plan *Plan, results []*protocol.Result, start, end time.Time, throttled time.Duration, pauses int, budget bool) *Summary {
	reused := map[string]bool{}
	for _, r := range plan.Reused {
		reused[r.Key] = true
	}
	s := &Summary{SchemaVersion: SummarySchemaVersion, Spec: spec.File(), SpecDigest: plan.SpecDigest,
		SessionsDigest: plan.SessionsDigest, StartedAt: start.UTC().Format(time.RFC3339), EndedAt: end.UTC().Format(time.RFC3339),
		DurationMS: end.Sub(start).Milliseconds(), Sessions: []Row{}}
	s.Totals.ThrottledMS, s.Totals.ThrottlePauses, s.Totals.BudgetExhausted = throttled.Milliseconds(), pauses, budget
	lines := jobLines(spec)
	for _, res := range results {
		row := rowOf(res, reused[res.Key])
		row.Line = lines[res.JobID]
		s.Sessions = append(s.Sessions, row)
	}
	s.total()
	return s
}

func rowOf(res *protocol.Result, reused bool) Row {
	row := Row{Key: res.Key, JobID: res.JobID, SessionID: res.SessionID, Status: res.Status, IsError: res.IsError,
		NumTurns: res.NumTurns, DurationMS: res.DurationMS, Usage: res.Usage, CostUSD: res.TotalCostUSD,
		Attempts: res.Attempts, Error: res.Error, Failure: explain(res), Reused: reused, Provenance: res.Provenance}
	for _, c := range res.Checks {
		row.Checks = append(row.Checks, CheckRow{Name: c.Name, Passed: c.Passed})
	}
	if res.Sandbox != nil {
		row.Sandbox = res.Sandbox.Level
	}
	return row
}

// Unconfined counts the sessions whose tools ran with the sandbox off.
func (s *Summary) Unconfined() int {
	n := 0
	for _, r := range s.Sessions {
		if r.Sandbox == "off" {
			n++
		}
	}
	return n
}

// unconfinedNote is the warning for them.
func unconfinedNote(n int) string {
	if n == 1 {
		return "Sandbox off: 1 session ran its tools without kernel confinement (sandbox.level: off)."
	}
	return fmt.Sprintf("Sandbox off: %d sessions ran their tools without kernel confinement (sandbox.level: off).", n)
}

// warn sets the warnings from the run's own (given) and the rows: each once, in order,
// the note on unconfined sessions last.
func (s *Summary) warn(given []string) {
	s.Warnings = nil
	add := func(w string) {
		if w != "" && !slices.Contains(s.Warnings, w) {
			s.Warnings = append(s.Warnings, w)
		}
	}
	for _, w := range given {
		add(w)
	}
	if n := s.Unconfined(); n > 0 {
		add(unconfinedNote(n))
	}
}

// total recomputes the totals from the rows.
func (s *Summary) total() {
	// The run is counted as one group of all its sessions, as the aggregates count theirs.
	all := summarize(Group{}, s.Sessions)
	t := &s.Totals
	t.Sessions, t.Passed, t.Failed = all.Sessions, all.Passed, all.Sessions-all.Passed
	t.ByStatus, t.CostUSD, t.CostComplete = all.ByStatus, all.CostUSD, all.CostComplete
	t.Reused, t.Usage = 0, protocol.Usage{}
	for _, r := range s.Sessions {
		if r.Reused {
			t.Reused++
		}
		t.Usage = t.Usage.Add(r.Usage)
	}
	t.Tokens = t.Usage.Total()
	s.Aggregates = aggregate(s.Sessions)
}

// ExitCode is the run's exit code: 130 when interrupted, 4 when the run-level budget
// ran out, 1 when a session failed, else 0.
func (s *Summary) ExitCode(interrupted bool) int {
	switch {
	case interrupted:
		return 130
	case s.Totals.BudgetExhausted:
		return 4
	case s.Totals.Failed > 0:
		return 1
	}
	return 0
}

// Headline is a one-line account of the run.
func (s *Summary) Headline() string {
	cost := fmt.Sprintf("$%.4f", s.Totals.CostUSD)
	if !s.Totals.CostComplete {
		cost += "+ (some costs unknown)"
	}
	return fmt.Sprintf("%d sessions · %d passed · %d failed · %s tokens · %s · %s",
		s.Totals.Sessions, s.Totals.Passed, s.Totals.Failed, thousands(s.Totals.Tokens), cost,
		duration(s.DurationMS))
}

// thousands formats n with thousands separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// duration renders milliseconds for people: to the millisecond under a second, to the
// tenth of a second above.
func duration(ms int64) time.Duration {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Second {
		return d
	}
	return d.Round(100 * time.Millisecond)
}

// provenanceLine says what produced the session in one line of name=value pairs:
// provider, model, each matrix value as matrix.NAME, repeat, attempt, sandbox and
// agentrun_version, the ones that are known.
func (r Row) provenanceLine() string {
	pairs := []string{"provider=" + r.Provider, "model=" + r.Model}
	for _, k := range slices.Sorted(maps.Keys(r.Matrix)) {
		pairs = append(pairs, "matrix."+k+"="+r.Matrix[k])
	}
	if r.Repeat > 0 {
		pairs = append(pairs, fmt.Sprintf("repeat=%d", r.Repeat))
	}
	if r.Attempt > 0 {
		pairs = append(pairs, fmt.Sprintf("attempt=%d", r.Attempt))
	}
	if r.Sandbox != "" {
		pairs = append(pairs, "sandbox="+r.Sandbox)
	}
	if r.Version != "" {
		pairs = append(pairs, "agentrun_version="+r.Version)
	}
	return strings.Join(pairs, " ")
}

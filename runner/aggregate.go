package runner

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// Aggregates answer the evaluation question per job, per model and per job and model:
// how often the sessions passed, pass@k, and what they cost.
type Aggregates struct {
	ByJob      []Group `json:"by_job"`
	ByModel    []Group `json:"by_model"`
	ByJobModel []Group `json:"by_job_model"`
}

// Group aggregates the sessions that share a job, a model, or both.
//
// A group's tasks are its sessions that differ only by repeat: the same job with the
// same matrix values. PassAtK["k"] is the mean over the tasks of the unbiased pass@k
// estimator of Chen et al. (2021), 1 - C(n-c, k) / C(n, k) for a task of n sessions of
// which c passed, for k = 1 up to the smallest n among the tasks. Every session counts,
// whatever its status: a failure of any kind is a sample that did not pass.
type Group struct {
	JobID    string `json:"job_id,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Sessions int    `json:"sessions"`
	Passed   int    `json:"passed"`
	// PassRate is Passed / Sessions.
	PassRate float64            `json:"pass_rate"`
	Tasks    int                `json:"tasks"`
	PassAtK  map[string]float64 `json:"pass_at_k"`
	// CostUSD sums the sessions with a known cost; CostComplete is false when some
	// session's cost is unknown (null).
	CostUSD      float64                 `json:"cost_usd"`
	CostComplete bool                    `json:"cost_complete"`
	Tokens       int64                   `json:"tokens"`
	DurationP50  int64                   `json:"duration_p50_ms"`
	DurationP90  int64                   `json:"duration_p90_ms"`
	ByStatus     map[protocol.Status]int `json:"by_status"`
}

// Label names the group for people: the job, the model, or both.
func (g Group) Label() string {
	var parts []string
	if g.JobID != "" {
		parts = append(parts, g.JobID)
	}
	if g.Model != "" || g.Provider != "" {
		parts = append(parts, modelLabel(g.Provider, g.Model))
	}
	return strings.Join(parts, " · ")
}

// modelLabel is "provider/model", or the one that is set.
func modelLabel(provider, model string) string {
	switch {
	case provider == "":
		return model
	case model == "":
		return provider
	}
	return provider + "/" + model
}

// aggregate computes the aggregates of rows; groups come in order of their label.
func aggregate(rows []Row) Aggregates {
	return Aggregates{
		ByJob:      groupBy(rows, func(r Row) groupID { return groupID{job: r.JobID} }),
		ByModel:    groupBy(rows, func(r Row) groupID { return groupID{provider: r.Provider, model: r.Model} }),
		ByJobModel: groupBy(rows, func(r Row) groupID { return groupID{job: r.JobID, provider: r.Provider, model: r.Model} }),
	}
}

// groupID is what the sessions of a group share.
type groupID struct{ job, provider, model string }

// groupBy partitions rows by the identity that of returns and aggregates each part.
func groupBy(rows []Row, of func(Row) groupID) []Group {
	parts := map[groupID][]Row{}
	for _, r := range rows {
		id := of(r)
		parts[id] = append(parts[id], r)
	}
	ids := slices.SortedFunc(maps.Keys(parts), func(a, b groupID) int {
		return cmp.Or(strings.Compare(a.job, b.job), strings.Compare(a.provider, b.provider), strings.Compare(a.model, b.model))
	})
	out := make([]Group, 0, len(ids))
	for _, id := range ids {
		out = append(out, summarize(Group{JobID: id.job, Provider: id.provider, Model: id.model}, parts[id]))
	}
	return out
}

// summarize fills g from its rows.
func summarize(g Group, rows []Row) Group {
	g.ByStatus, g.CostComplete = map[protocol.Status]int{}, true
	tasks := map[string][2]int{} // task → sessions, passed
	durations := make([]int64, 0, len(rows))
	for _, r := range rows {
		g.Sessions++
		g.ByStatus[r.Status]++
		task := taskOf(r)
		t := tasks[task]
		t[0]++
		if r.Status == protocol.StatusSuccess {
			g.Passed++
			t[1]++
		}
		tasks[task] = t
		g.Tokens += r.Usage.Total()
		if r.CostUSD != nil {
			g.CostUSD += *r.CostUSD
		} else {
			g.CostComplete = false
		}
		durations = append(durations, r.DurationMS)
	}
	if g.Sessions > 0 {
		g.PassRate = float64(g.Passed) / float64(g.Sessions)
	}
	g.Tasks = len(tasks)
	g.PassAtK = map[string]float64{}
	kmax := math.MaxInt
	for _, t := range tasks {
		kmax = min(kmax, t[0])
	}
	for k := 1; k <= kmax && len(tasks) > 0; k++ {
		sum := 0.0
		for _, t := range tasks {
			sum += PassAtK(t[0], t[1], k)
		}
		g.PassAtK[fmt.Sprint(k)] = round6(sum / float64(len(tasks)))
	}
	g.PassRate = round6(g.PassRate)
	slices.Sort(durations)
	g.DurationP50, g.DurationP90 = percentile(durations, 50), percentile(durations, 90)
	return g
}

// taskOf names a row's task: its job and matrix values, without the repeat.
func taskOf(r Row) string {
	var b strings.Builder
	b.WriteString(r.JobID)
	for _, k := range slices.Sorted(maps.Keys(r.Matrix)) {
		b.WriteString("\x00" + k + "=" + r.Matrix[k])
	}
	if len(r.Matrix) == 0 {
		// A row from before provenance: the key without its repeat suffix.
		b.WriteString("\x00" + strings.TrimSuffix(r.Key, repeatSuffix(r.Key)))
	}
	return b.String()
}

// repeatSuffix returns the ".rN" at the end of key, or "".
func repeatSuffix(key string) string {
	i := strings.LastIndex(key, ".r")
	if i < 0 || i+2 == len(key) {
		return ""
	}
	for _, c := range key[i+2:] {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return key[i:]
}

// PassAtK is the unbiased estimator of pass@k of Chen et al. (2021) for one task with n
// samples of which c passed: the probability that at least one of k samples drawn
// without replacement passed, 1 - C(n-c, k) / C(n, k). It is computed as a product, which
// stays exact enough for any n. It is 0 for k outside 1..n.
func PassAtK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		return 0
	}
	if n-c < k {
		return 1
	}
	// C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k/i)
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return 1 - p
}

// percentile is the nearest-rank percentile of sorted values; 0 for none.
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 · n)
	return sorted[max(rank, 1)-1]
}

// round6 rounds to six decimals, so that the JSON reads 0.666667 and not 0.6666666666666667.
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// markdown writes the aggregate tables: by model and by job, and by both when the run
// has more than one of each.
func (a Aggregates) markdown(b *strings.Builder) {
	multi := len(a.ByJob) > 1 && len(a.ByModel) > 1
	tables := []struct {
		title  string
		groups []Group
		show   bool
	}{
		{"By model", a.ByModel, len(a.ByModel) > 0},
		{"By job", a.ByJob, len(a.ByJob) > 0},
		{"By job and model", a.ByJobModel, multi},
	}
	for _, t := range tables {
		if !t.show {
			continue
		}
		kmax := 0
		for _, g := range t.groups {
			kmax = max(kmax, len(g.PassAtK))
		}
		fmt.Fprintf(b, "\n### %s\n\n| %s | Sessions | Passed | Pass rate |", t.title, strings.TrimPrefix(t.title, "By "))
		for k := 1; k <= kmax; k++ {
			fmt.Fprintf(b, " pass@%d |", k)
		}
		b.WriteString(" Cost | Tokens | Duration p50 | p90 | Failures |\n|---|---:|---:|---:|")
		b.WriteString(strings.Repeat("---:|", kmax))
		b.WriteString("---:|---:|---:|---:|---|\n")
		for _, g := range t.groups {
			fmt.Fprintf(b, "| %s | %d | %d | %s |", mdCell(g.Label()), g.Sessions, g.Passed, percent(g.PassRate))
			for k := 1; k <= kmax; k++ {
				v, ok := g.PassAtK[fmt.Sprint(k)]
				if !ok {
					b.WriteString(" – |")
					continue
				}
				fmt.Fprintf(b, " %s |", percent(v))
			}
			cost := fmt.Sprintf("$%.4f", g.CostUSD)
			if !g.CostComplete {
				cost += "+"
			}
			fmt.Fprintf(b, " %s | %s | %s | %s | %s |\n", cost, thousands(g.Tokens), duration(g.DurationP50),
				duration(g.DurationP90), failureCounts(g.ByStatus))
		}
	}
}

// percent renders a fraction as a percentage with one decimal.
func percent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// failureCounts lists the statuses other than success with their counts, in order of
// the status name: "error_checks 2, error_provider 1"; "–" when none failed.
func failureCounts(by map[protocol.Status]int) string {
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(by)) {
		if st != protocol.StatusSuccess && by[st] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", st, by[st]))
		}
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, ", ")
}

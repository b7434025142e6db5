package runner

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/sourcegraph/conc/pool"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// ReportFile is the run's HTML report: one self-contained file, which opens from disk.
const ReportFile = "report.html"

// ErrNoSummary means a folder given to Report holds no summary.json.
var ErrNoSummary = errors.New("no summary")

//go:embed report/report.html report/report.css report/report.js
var reportFS embed.FS

// reportTemplate is parsed once; a parsed template is safe for concurrent use.
var reportTemplate = template.Must(template.New("report.html").ParseFS(reportFS, "report/report.html"))

// Report rewrites dir/report.html from the summary.json in dir and the session folders
// it names: the sessions/ folder of a run, or the shards' folders of a merged summary.
func Report(dir string) (*Summary, error) {
	var sum Summary
	path := filepath.Join(dir, SummaryFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s holds no %s (give the output folder of agentrun run or merge)", ErrNoSummary, dir, SummaryFile)
	} else if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		return nil, fmt.Errorf("%w: %s is not agentrun's summary: %s%w", ErrNoSummary, path, jsonPlace(b, err), err)
	}
	// The totals and aggregates are recomputed from the rows, so that the report of a
	// summary written by an earlier agentrun has them too.
	sum.total()
	dirs := make(map[string]string, len(sum.Sessions))
	for _, r := range sum.Sessions {
		dirs[r.Key] = filepath.Join(dir, filepath.FromSlash(r.folder()))
	}
	if err := writeReport(nil, dir, &sum, func(key string) string { return dirs[key] }); err != nil {
		return nil, err
	}
	return &sum, nil
}

// jsonPlace is "line L, column C: " of the place in data where a JSON decoding error
// arose, or "" when it names none.
func jsonPlace(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var off int64
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return ""
	}
	// Offset counts the bytes read, up to and with the one at fault (the last one of a
	// value of the wrong type).
	off = min(max(off-1, 0), int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Sprintf("line %d, column %d: ", line, col)
}

// folder is the session's folder relative to its summary's folder, slash-separated.
func (r Row) folder() string {
	if r.SessionDir != "" {
		return r.SessionDir
	}
	return SessionsDir + "/" + r.Key
}

// reportPage is what the template draws.
type reportPage struct {
	Sum      *Summary
	Title    string
	Facts    []fact
	Totals   []fact
	Warnings []string
	Charts   []chart
	Tables   []groupTable
	Statuses []protocol.Status
	Rows     []reportRow
	// Details are the sessions' packed details, in the order of Rows.
	Details []string
	CSS     template.CSS
	JS      template.JS
}

// fact is one labelled value of the header; Title, when set, is its full form.
type fact struct {
	Label, Value, Title string
}

// groupTable is one table of aggregates.
type groupTable struct {
	Title  string
	Name   string
	K      []int
	Groups []groupRow
}

type groupRow struct {
	Label, Sessions, Passed, PassRate, Cost, Tokens, P50, P90, Failures string
	PassAtK                                                             []string
}

// reportRow is one row of the session table; the Sort values order its columns.
type reportRow struct {
	Row
	Index                              int
	Passed                             bool
	Model, Duration, Tokens, Cost      string
	Checks                             []CheckRow
	Reason                             string
	SortDuration, SortTokens, SortCost string
}

// writeReport writes out/report.html for sum with files, reading each session's
// details from sessionDir(key).
func writeReport(files *sink.Files, out string, sum *Summary, sessionDir func(key string) string) error {
	page, err := buildReport(files, sum, sessionDir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var b bytes.Buffer
	if err := reportTemplate.Execute(&b, page); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return files.WriteFile(filepath.Join(out, ReportFile), b.Bytes(), true)
}

// maskedSummary is a copy of sum with files' secrets masked. The page escapes text for
// HTML, which gives a secret forms that no mask of the written file would find (a +
// becomes &#43;): the values are masked before they are drawn.
func maskedSummary(files *sink.Files, sum *Summary) (*Summary, error) {
	if !files.Secrets() {
		return sum, nil
	}
	b, err := json.Marshal(sum)
	if err != nil {
		return nil, err
	}
	var masked Summary
	if err := json.Unmarshal(files.Mask(SummaryFile, b), &masked); err != nil {
		return nil, err
	}
	return &masked, nil
}

// buildReport lays out the page of raw, masked with files, with every session's details.
func buildReport(files *sink.Files, raw *Summary, sessionDir func(key string) string) (*reportPage, error) {
	sum, err := maskedSummary(files, raw)
	if err != nil {
		return nil, err
	}
	p, err := layoutReport(sum)
	if err != nil {
		return nil, err
	}
	p.Details = make([]string, len(sum.Sessions))
	// Compressing is most of the work: one session per core at a time.
	work := pool.New().WithErrors().WithMaxGoroutines(runtime.GOMAXPROCS(0))
	pk := newPacker(files)
	for i, r := range sum.Sessions {
		work.Go(func() error {
			// The row of the raw summary: pack masks the whole detail as JSON.
			d := readDetail(raw.Sessions[i], sessionDir(r.Key), r.folder())
			packed, err := pk.pack(d)
			p.Details[i] = packed
			return err
		})
	}
	if err := work.Wait(); err != nil {
		return nil, err
	}
	return p, nil
}

// layoutReport lays out the page of sum without the sessions' details: the header, the
// banners, the charts and the tables.
func layoutReport(sum *Summary) (*reportPage, error) {
	css, err := reportFS.ReadFile("report/report.css")
	if err != nil {
		return nil, err
	}
	js, err := reportFS.ReadFile("report/report.js")
	if err != nil {
		return nil, err
	}
	p := &reportPage{Sum: sum, CSS: template.CSS(css), JS: template.JS(js), Title: "agentrun: " + sum.Spec}
	p.header()
	p.Warnings = append(p.Warnings, sum.Warnings...)
	if n := sum.Unconfined(); n > 0 {
		p.Warnings = append(p.Warnings, unconfinedNote(n))
	}
	if sum.Totals.BudgetExhausted {
		p.Warnings = append(p.Warnings, "The run-level budget was exhausted: some sessions were stopped or not started.")
	}
	a := sum.Aggregates
	p.Charts = []chart{passChart("Pass rate by model", a.ByModel), passChart("Pass rate by job", a.ByJob),
		costChart(sum), durationChart(sum.Sessions)}
	p.Tables = []groupTable{groupTableOf("By model", "model", a.ByModel), groupTableOf("By job", "job", a.ByJob)}
	if len(a.ByJob) > 1 && len(a.ByModel) > 1 {
		p.Tables = append(p.Tables, groupTableOf("By job and model", "job and model", a.ByJobModel))
	}
	p.Statuses = sortedStatuses(sum.Totals.ByStatus)
	for i, r := range sum.Sessions {
		p.Rows = append(p.Rows, rowOfReport(i, r))
	}
	return p, nil
}

// header fills the run's facts and totals.
func (p *reportPage) header() {
	s := p.Sum
	short := func(d string) string {
		if len(d) > 16 {
			return d[:16] + "…"
		}
		return d
	}
	p.Facts = []fact{{"Spec", s.Spec, ""}, {"Spec digest", short(s.SpecDigest), s.SpecDigest},
		{"Sessions digest", short(s.SessionsDigest), s.SessionsDigest}, {"agentrun", s.Version, ""},
		{"Started", s.StartedAt, ""}, {"Ended", s.EndedAt, ""}, {"Duration", duration(s.DurationMS).String(), ""}}
	switch {
	case s.Shard != "":
		p.Facts = append(p.Facts, fact{"Shard", s.Shard, ""})
	case len(s.Shards) > 0:
		p.Facts = append(p.Facts, fact{"Merged shards", strings.Join(s.Shards, ", "), ""})
	}
	t := s.Totals
	rate := "–"
	if t.Sessions > 0 {
		rate = percent(float64(t.Passed) / float64(t.Sessions))
	}
	cost := fmt.Sprintf("$%.4f", t.CostUSD)
	if !t.CostComplete {
		cost += "+ (some models unpriced)"
	}
	failures := ""
	if t.Failed > 0 {
		failures = failureCounts(t.ByStatus)
	}
	p.Totals = []fact{{"Sessions", strconv.Itoa(t.Sessions), ""}, {"Passed", strconv.Itoa(t.Passed), ""},
		{"Failed", strconv.Itoa(t.Failed), failures}, {"Pass rate", rate, ""},
		{"Tokens", thousands(t.Tokens), fmt.Sprintf("%s in, %s out, %s cache read, %s cache written", thousands(t.Usage.Input),
			thousands(t.Usage.Output), thousands(t.Usage.CacheRead), thousands(t.Usage.CacheCreation))},
		{"Cost", cost, ""}}
	if t.Reused > 0 {
		p.Totals = append(p.Totals, fact{"From earlier runs", strconv.Itoa(t.Reused), ""})
	}
	if t.ThrottledMS > 0 {
		p.Totals = append(p.Totals, fact{"Throttled", duration(t.ThrottledMS).String(), fmt.Sprintf("%d pauses", t.ThrottlePauses)})
	}
}

// shownK are the k of pass@k that the report shows for groups: 1 to 5 and the largest.
func shownK(groups []Group) []int {
	kmax := 0
	for _, g := range groups {
		kmax = max(kmax, len(g.PassAtK))
	}
	var ks []int
	for k := 1; k <= min(kmax, 5); k++ {
		ks = append(ks, k)
	}
	if kmax > 5 {
		ks = append(ks, kmax)
	}
	return ks
}

func groupTableOf(title, name string, groups []Group) groupTable {
	t := groupTable{Title: title, Name: name, K: shownK(groups)}
	for _, g := range groups {
		cost := fmt.Sprintf("$%.4f", g.CostUSD)
		if !g.CostComplete {
			cost += "+"
		}
		r := groupRow{Label: g.Label(), Sessions: strconv.Itoa(g.Sessions), Passed: strconv.Itoa(g.Passed),
			PassRate: percent(g.PassRate), Cost: cost, Tokens: thousands(g.Tokens),
			P50: duration(g.DurationP50).String(), P90: duration(g.DurationP90).String(), Failures: failureCounts(g.ByStatus)}
		for _, k := range t.K {
			v, ok := g.PassAtK[strconv.Itoa(k)]
			if !ok {
				r.PassAtK = append(r.PassAtK, "–")
				continue
			}
			r.PassAtK = append(r.PassAtK, percent(v))
		}
		t.Groups = append(t.Groups, r)
	}
	return t
}

func rowOfReport(i int, r Row) reportRow {
	rr := reportRow{Row: r, Index: i, Passed: r.Status == protocol.StatusSuccess, Model: modelLabel(r.Provider, r.Model),
		Duration: duration(r.DurationMS).String(), Tokens: thousands(r.Usage.Total()), Cost: costCell(r.CostUSD),
		Checks: r.Checks, SortDuration: strconv.FormatInt(r.DurationMS, 10), SortTokens: strconv.FormatInt(r.Usage.Total(), 10),
		SortCost: "-1"}
	if r.CostUSD != nil {
		rr.SortCost = strconv.FormatFloat(*r.CostUSD, 'g', -1, 64)
	}
	if f := r.failure(); f != nil {
		rr.Reason = f.Summary
	}
	return rr
}

package runner

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// writeReports writes summary.json, summary.md, junit.xml and the finished run.json.
func (r *Runner) writeReports(files *sink.Files, sum *Summary, info *RunInfo, end time.Time) error {
	sum.Shard = r.opts.Shard.String()
	dir := func(key string) string { return filepath.Join(r.opts.Out, SessionsDir, key) }
	return WriteReports(files, r.opts.Out, sum, dir, func() error {
		info.EndedAt = end.UTC().Format(time.RFC3339)
		return files.WriteJSON(filepath.Join(r.opts.Out, RunFile), info)
	})
}

// WriteReports writes the summaries of sum into out (summary.json, summary.md,
// junit.xml and report.html) with files, which masks the run's secrets, then calls
// more, if set. sessionDir locates each session's folder.
func WriteReports(files *sink.Files, out string, sum *Summary, sessionDir func(key string) string, more func() error) error {
	if err := files.WriteJSON(filepath.Join(out, SummaryFile), sum); err != nil {
		return fmt.Errorf("write reports: %w", err)
	}
	if err := files.WriteFile(filepath.Join(out, SummaryMDFile), []byte(sum.Markdown()), true); err != nil {
		return fmt.Errorf("write reports: %w", err)
	}
	junit, err := sum.JUnit(sessionDir)
	if err != nil {
		return fmt.Errorf("write reports: %w", err)
	}
	if err := files.WriteFile(filepath.Join(out, JUnitFile), junit, true); err != nil {
		return fmt.Errorf("write reports: %w", err)
	}
	if err := writeReport(files, out, sum, sessionDir); err != nil {
		return fmt.Errorf("write reports: %w", err)
	}
	if more != nil {
		return more()
	}
	return nil
}

// statusMark is the symbol of a status in the markdown table.
func statusMark(s protocol.Status) string {
	switch s {
	case protocol.StatusSuccess:
		return "✅"
	case protocol.StatusCancelled:
		return "⏹️"
	default:
		return "❌"
	}
}

// mdEscaper makes text safe inside a markdown table cell: one line, no HTML, and no
// link or image, since a message may hold what a server or the model wrote, GitHub
// fetches a step summary's images as it renders it, and a link there looks like the
// run's own. It is immutable and safe for concurrent use.
var mdEscaper = strings.NewReplacer("|", `\|`, "\r", " ", "\n", " ", "<", "&lt;", ">", "&gt;",
	`\`, `\\`, "[", `\[`, "]", `\]`)

// bannerEscaper makes a warning one line of markdown that holds no HTML, link or image.
var bannerEscaper = strings.NewReplacer("\r", " ", "\n", " ", "<", "&lt;", ">", "&gt;", `\`, `\\`, "[", `\[`, "]", `\]`)

// mdCell makes text safe inside a markdown table cell.
func mdCell(s string) string {
	return clip(mdEscaper.Replace(s), 200)
}

// costNumber is a cost as a JSON number, null when it is unknown.
func costNumber(c *float64) string {
	if c == nil {
		return "null"
	}
	return strconv.FormatFloat(*c, 'f', -1, 64)
}

func costCell(c *float64) string {
	if c == nil {
		return "–"
	}
	return fmt.Sprintf("$%.4f", *c)
}

// Markdown renders the summary as a GitHub-flavoured markdown report.
func (s *Summary) Markdown() string {
	var b strings.Builder
	title := "agentrun"
	if s.Shard != "" {
		title += " (shard " + s.Shard + ")"
	}
	fmt.Fprintf(&b, "## %s: %s\n\n", title, s.Headline())
	for _, w := range s.Warnings {
		b.WriteString("> **⚠ " + bannerEscaper.Replace(w) + "**\n\n")
	}
	if s.Totals.ThrottledMS > 0 {
		fmt.Fprintf(&b, "Providers throttled the run for %s (%d pauses).\n\n",
			duration(s.Totals.ThrottledMS), s.Totals.ThrottlePauses)
	}
	if s.Totals.PacedMS > 0 {
		fmt.Fprintf(&b, "Requests were paced for %s to stay within the providers' rate limits.\n\n", duration(s.Totals.PacedMS))
	}
	if s.Totals.BudgetExhausted {
		b.WriteString("The run-level budget was exhausted: some sessions were stopped or not started.\n\n")
	}
	b.WriteString("| Session | Status | Turns | Duration | Tokens in / out | Cost | Checks |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|\n")
	for _, r := range s.Sessions {
		var checks []string
		for _, c := range r.Checks {
			mark := "✓"
			if !c.Passed {
				mark = "✗"
			}
			checks = append(checks, mdCell(c.Name)+" "+mark)
		}
		status := string(r.Status)
		if r.Reused {
			status += " (earlier run)"
		}
		fmt.Fprintf(&b, "| `%s` | %s %s | %d | %s | %s / %s | %s | %s |\n", mdCell(r.Key), statusMark(r.Status), status,
			r.NumTurns, duration(r.DurationMS),
			thousands(r.Usage.Input+r.Usage.CacheRead+r.Usage.CacheCreation), thousands(r.Usage.Output),
			costCell(r.CostUSD), strings.Join(checks, ", "))
	}
	s.Aggregates.markdown(&b)
	heading := "\n### Failures\n\n"
	for _, r := range s.Sessions {
		if f := r.failure(); f != nil {
			b.WriteString(heading)
			heading = ""
			writeMDFailure(&b, r.Key, f)
		}
	}
	return b.String()
}

// writeMDFailure writes a failure as an item of a list: the session and the summary,
// then the detail as a code block inside the item.
func writeMDFailure(b *strings.Builder, key string, f *Failure) {
	fmt.Fprintf(b, "- `%s` %s\n", mdCell(key), mdEscaper.Replace(f.Summary))
	if f.Detail == "" {
		return
	}
	fence := "```"
	for strings.Contains(f.Detail, fence) {
		fence += "`"
	}
	b.WriteString("  " + fence + "\n")
	for _, line := range strings.Split(f.Detail, "\n") {
		b.WriteString("  " + line + "\n")
	}
	b.WriteString("  " + fence + "\n")
}

// JUnit XML, valid against the Jenkins xunit junit-10.xsd and, suite by suite, Maven
// Surefire's surefire-test-report-3.0.xsd: properties only on the suite, no skipped
// count on testsuites, no timestamp on the suite. The testcase's file and line (the
// spec and its job's line, read by mikepenz/action-junit-report and
// dorny/test-reporter) are the one addition to both schemas.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string       `xml:"name,attr"`
	Classname string       `xml:"classname,attr"`
	Time      string       `xml:"time,attr"`
	File      string       `xml:"file,attr,omitempty"`
	Line      int          `xml:"line,attr,omitempty"`
	Failure   *junitResult `xml:"failure,omitempty"`
	Error     *junitResult `xml:"error,omitempty"`
	Skipped   *junitSkip   `xml:"skipped,omitempty"`
	SystemOut string       `xml:"system-out,omitempty"`
}

type junitResult struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junitSkip has no type: Surefire's skipped allows only a message.
type junitSkip struct {
	Message string `xml:"message,attr"`
}

// junitTail is how much of a transcript a test case carries.
const junitTail = 4000

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }

// JUnit renders one test case per session; the transcript in each session's folder
// (sessionDir) provides the case's system-out. Checks and schema failures are failures; provider,
// timeout and crash failures are errors; cancelled sessions are skipped.
func (s *Summary) JUnit(sessionDir func(key string) string) ([]byte, error) {
	suite := junitSuite{Name: s.Spec, Time: seconds(s.DurationMS),
		Properties: []junitProperty{{"spec_digest", s.SpecDigest}, {"sessions_digest", s.SessionsDigest},
			{"started_at", s.StartedAt}, {"agentrun_version", s.Version}}}
	if s.Shard != "" {
		suite.Properties = append(suite.Properties, junitProperty{"shard", s.Shard})
	}
	for _, r := range s.Sessions {
		c := junitCase{Name: r.Key, Classname: r.JobID, Time: seconds(r.DurationMS), File: s.Spec, Line: r.Line}
		// What were testcase properties, which neither schema allows, heads system-out.
		head := fmt.Sprintf("session_id=%s status=%s turns=%d input_tokens=%d output_tokens=%d cost_usd=%s\n%s\n",
			r.SessionID, r.Status, r.NumTurns, r.Usage.Input, r.Usage.Output, costNumber(r.CostUSD), r.provenanceLine())
		// The message is the failure's summary, the text its detail (or the summary).
		msg, detail := string(r.Status), ""
		if f := r.failure(); f != nil {
			msg, detail = f.Summary, f.Detail
			if detail == "" {
				detail = f.Summary
			}
		}
		switch r.Status {
		case protocol.StatusSuccess:
		case protocol.StatusCancelled:
			c.Skipped = &junitSkip{Message: msg}
			suite.Skipped++
		case protocol.StatusChecks, protocol.StatusOutputSchema, protocol.StatusMaxTurns,
			protocol.StatusMaxTokens, protocol.StatusBudget:
			c.Failure = &junitResult{Message: msg, Type: string(r.Status), Text: detail}
			suite.Failures++
		default:
			c.Error = &junitResult{Message: msg, Type: string(r.Status), Text: detail}
			suite.Errors++
		}
		c.SystemOut = head
		if b, err := readTail(filepath.Join(sessionDir(r.Key), TranscriptFile), junitTail+8); err == nil {
			c.SystemOut += tailOf(strings.ToValidUTF8(string(b), "�"), junitTail)
		}
		suite.Cases = append(suite.Cases, c)
		suite.Tests++
	}
	doc := junitSuites{Name: "agentrun", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Time: suite.Time, Suites: []junitSuite{suite}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("junit: %w", err)
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// Text renders the summary as a plain-text table for a terminal or a log.
func (s *Summary) Text() string {
	var b strings.Builder
	keyWidth := len("SESSION")
	for _, r := range s.Sessions {
		keyWidth = max(keyWidth, len(r.Key))
	}
	keyWidth = min(keyWidth, 60)
	fmt.Fprintf(&b, "%-*s  %-20s %6s %9s %10s  %s\n", keyWidth, "SESSION", "STATUS", "TURNS", "DURATION", "COST", "CHECKS")
	for _, r := range s.Sessions {
		var checks []string
		for _, c := range r.Checks {
			mark := "ok"
			if !c.Passed {
				mark = "FAIL"
			}
			checks = append(checks, c.Name+":"+mark)
		}
		fmt.Fprintf(&b, "%-*s  %-20s %6d %9s %10s  %s\n", keyWidth, clip(r.Key, keyWidth), r.Status, r.NumTurns,
			duration(r.DurationMS), costCell(r.CostUSD), strings.Join(checks, " "))
	}
	fmt.Fprintf(&b, "\n%s\n", s.Headline())
	return b.String()
}

// readTail returns the last n bytes of a file (all of a shorter one) without reading
// the rest.
func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(st.Size()-n, 0)
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b, nil
}

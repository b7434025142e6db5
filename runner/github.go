package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// GitHub is the GitHub Actions integration: workflow commands on the job log, step
// outputs, and the step summary. It follows the runner's file-command and
// workflow-command formats.
type GitHub struct {
	// Output and StepSummary are the paths in $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY
	// (empty: not written).
	Output, StepSummary string
	// Log is where workflow commands go: the process's stdout. Its writes are best
	// effort: a command that cannot be written has nowhere else to go.
	Log io.Writer
	// Random makes delimiters and stop tokens [crypto/rand].
	Random io.Reader
	// Workspace is $GITHUB_WORKSPACE: annotations name a spec inside it relative to it.
	Workspace string
	// Version is agentrun's, for the execution file of a single-session run.
	Version string

	mu sync.Mutex
	// masked are the values already registered with the masker.
	masked map[string]bool
	// annotated counts the annotations written per level; withheld are the keys of
	// failed sessions past GitHub's per-step limit, reported together by Report.
	annotated map[string]int
	withheld  map[string][]string
}

// GitHubFromEnv returns the integration when GITHUB_ACTIONS is "true", else nil.
func GitHubFromEnv(getenv func(string) string, log io.Writer) *GitHub {
	if getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	return &GitHub{Output: getenv("GITHUB_OUTPUT"), StepSummary: getenv("GITHUB_STEP_SUMMARY"), Log: log,
		Workspace: getenv("GITHUB_WORKSPACE")}
}

// MaxStepSummary is GitHub's limit on one step's summary.
const MaxStepSummary = 1 << 20

// maxAnnotation bounds an annotation's message: GitHub keeps 4,096 characters of it.
const maxAnnotation = 4000

// MaxAnnotations is how many annotations of one level (error, warning) GitHub shows
// for one step; it drops the rest silently.
const MaxAnnotations = 10

func (g *GitHub) token() string {
	r := g.Random
	if r == nil {
		r = rand.Reader
	}
	var b [16]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		panic(fmt.Sprintf("github: random: %v", err)) // crypto/rand does not fail
	}
	return hex.EncodeToString(b[:])
}

// escapeData escapes a workflow command's message.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// Mask registers secret values with the log masker, each line of a multi-line value
// (lines end at "\n" or "\r", as the runner reads the log) once.
func (g *GitHub) Mask(values []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.masked == nil {
		g.masked = map[string]bool{}
	}
	for _, v := range values {
		for _, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if line = strings.TrimSpace(line); line != "" && !g.masked[line] {
				g.masked[line] = true
				_, _ = fmt.Fprintf(g.Log, "::add-mask::%s\n", escapeData(line))
			}
		}
	}
}

// sessionLog returns a sink that renders a session as text and, when the session ends,
// writes it to the log as one collapsible group, with workflow-command processing
// stopped around it so model output cannot issue commands, followed by an annotation
// when the session failed.
func (g *GitHub) sessionLog(key, file string, line int) sink.Sink {
	gs := &githubSession{g: g, key: key, file: file, line: line}
	gs.text = sink.NewText(&gs.buf, sink.TextOptions{})
	return gs
}

type githubSession struct {
	g    *GitHub
	key  string
	file string // the spec, and the job's line in it, that annotations point at
	line int
	buf  bytes.Buffer
	text *sink.Text
	res  *protocol.Result
}

// maxGroup bounds what one session puts in the job log; the artifacts keep everything.
const maxGroup = 256 << 10

func (s *githubSession) Write(m protocol.Message) error {
	if m.Kind == protocol.KindResult {
		s.res = m.Final
	}
	return s.text.Write(m)
}

func (s *githubSession) Close() error {
	err := s.text.Close()
	g := s.g
	g.mu.Lock()
	defer g.mu.Unlock()
	title := s.key
	if s.res != nil {
		title = fmt.Sprintf("%s %s %s", statusMark(s.res.Status), s.key, s.res.Status)
	}
	token := g.token()
	body := s.buf.String()
	if len(body) > maxGroup {
		body = "[… earlier output omitted; see the session's transcript.txt …]\n" + tailOf(body, maxGroup)
	}
	body = neutralizeCommands(body)
	_, _ = fmt.Fprintf(g.Log, "::group::%s\n::stop-commands::%s\n%s", escapeData(title), token, body)
	if !strings.HasSuffix(body, "\n") {
		_, _ = fmt.Fprintln(g.Log)
	}
	_, _ = fmt.Fprintf(g.Log, "::%s::\n::endgroup::\n", token)
	if s.res != nil && s.res.Status != protocol.StatusSuccess {
		level := "error"
		if s.res.Status == protocol.StatusCancelled {
			level = "warning"
		}
		g.annotate(level, s.key, s.file, s.line, explain(s.res).Text())
	}
	return err
}

// zeroWidthSpace starts a line of model output that looks like a workflow command.
const zeroWidthSpace = "\u200b"

// neutralizeCommands puts a zero-width space before every line of s that, leading
// white space aside, starts like a workflow command ("::name::" or the older
// "##[name]"). Lines end at "\n" or "\r", as the Actions runner reads them. It is
// the second guard besides stop-commands: it also keeps the log viewer from drawing
// groups and error lines that the model wrote.
func neutralizeCommands(s string) string {
	var b strings.Builder
	done, start := 0, 0 // s[:done] is in b; s[start:i] is the current line
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '\n' && s[i] != '\r' {
			continue
		}
		line := strings.TrimLeftFunc(s[start:i], unicode.IsSpace)
		if strings.HasPrefix(line, "::") || strings.HasPrefix(line, "##[") {
			b.WriteString(s[done:start])
			b.WriteString(zeroWidthSpace)
			done = start
		}
		start = i + 1
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// annotate writes an annotation for a failed session, or withholds it once the level
// has used all but one of GitHub's per-step annotations: the last one is kept for
// Report to name the withheld sessions. The caller holds g.mu.
func (g *GitHub) annotate(level, key, file string, line int, msg string) {
	if g.annotated == nil {
		g.annotated, g.withheld = map[string]int{}, map[string][]string{}
	}
	if g.annotated[level] >= MaxAnnotations-1 {
		g.withheld[level] = append(g.withheld[level], key)
		return
	}
	g.annotated[level]++
	where := ""
	if file != "" {
		if rel, err := filepath.Rel(g.Workspace, file); g.Workspace != "" && filepath.IsAbs(file) && err == nil && !strings.HasPrefix(rel, "..") {
			file = rel
		}
		where = "file=" + escapeProperty(filepath.ToSlash(filepath.Clean(file))) + ","
		if line > 0 {
			where += "line=" + strconv.Itoa(line) + ","
		}
	}
	_, _ = fmt.Fprintf(g.Log, "::%s %stitle=%s::%s\n", level, where, escapeProperty("agentrun "+key), escapeData(clip(msg, maxAnnotation)))
}

// annotateWithheld writes one annotation per level naming the failed sessions that
// annotate withheld. The caller holds g.mu.
func (g *GitHub) annotateWithheld() {
	for _, level := range []string{"error", "warning"} {
		keys := g.withheld[level]
		if len(keys) == 0 {
			continue
		}
		title := fmt.Sprintf("agentrun: %d more sessions", len(keys))
		if level == "error" {
			title = fmt.Sprintf("agentrun: %d more failed sessions", len(keys))
		}
		msg := clip(strings.Join(keys, ", "), 2000) + " (see the step summary and the run's artifacts)"
		_, _ = fmt.Fprintf(g.Log, "::%s title=%s::%s\n", level, escapeProperty(title), escapeData(msg))
		g.withheld[level] = nil
	}
}

// Report writes the step outputs, appends summary.md to the step summary and names
// the failed sessions whose annotations were withheld.
func (g *GitHub) Report(sum *Summary, out string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.Log != nil {
		g.annotateWithheld()
		for _, w := range sum.Warnings {
			_, _ = fmt.Fprintf(g.Log, "::warning title=%s::%s\n", escapeProperty("agentrun: warning"), escapeData(w))
		}
	}
	if g.Output != "" {
		status := "success"
		if sum.Totals.Failed > 0 || sum.Totals.BudgetExhausted {
			status = "failure"
		}
		abs, err := filepath.Abs(filepath.Join(out, SummaryFile))
		if err != nil {
			return fmt.Errorf("step outputs: %w", err)
		}
		outputs := [][2]string{
			{"status", status},
			{"passed", fmt.Sprint(sum.Totals.Passed)},
			{"failed", fmt.Sprint(sum.Totals.Failed)},
			{"total-cost-usd", fmt.Sprintf("%.6f", sum.Totals.CostUSD)},
			{"summary-json", abs},
			{"report-html", filepath.Join(filepath.Dir(abs), ReportFile)},
		}
		more, err := runOutputs(sum, out, status, g.Version)
		if err != nil {
			return fmt.Errorf("step outputs: %w", err)
		}
		outputs = append(outputs, more...)
		if err := g.writeOutputs(outputs); err != nil {
			return fmt.Errorf("step outputs: %w", err)
		}
	}
	if g.StepSummary != "" {
		if err := g.appendStepSummary(sum.Markdown()); err != nil {
			return fmt.Errorf("step summary: %w", err)
		}
	}
	return nil
}

// summaryCut ends a step summary that had to be shortened.
const summaryCut = "\n(truncated: the full report is summary.md in the run's output folder)\n"

// appendStepSummary appends md to $GITHUB_STEP_SUMMARY, shortened at a line boundary so
// that the file, with what earlier commands of the step wrote, stays within
// MaxStepSummary: above it GitHub drops the whole summary.
func (g *GitHub) appendStepSummary(md string) error {
	f, err := os.OpenFile(g.StepSummary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return err
	}
	md += "\n"
	if room := MaxStepSummary - int(st.Size()); len(md) > room {
		md = cutLines(md, room-len(summaryCut))
		if md != "" {
			md += summaryCut
		}
	}
	if _, err := f.WriteString(md); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// cutLines returns the longest prefix of s of whole lines that fits in n bytes.
func cutLines(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	return s[:strings.LastIndexByte(s[:n], '\n')+1]
}

// writeOutputs appends name/value pairs to $GITHUB_OUTPUT in the heredoc form with a
// random delimiter that appears in neither name nor value. The caller holds g.mu.
func (g *GitHub) writeOutputs(pairs [][2]string) error {
	var b strings.Builder
	for _, kv := range pairs {
		delim := "ghadelimiter_" + g.token()
		for strings.Contains(kv[0], delim) || strings.Contains(kv[1], delim) {
			delim = "ghadelimiter_" + g.token()
		}
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", kv[0], delim, kv[1], delim)
	}
	f, err := os.OpenFile(g.Output, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

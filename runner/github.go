package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

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
	// Log is where workflow commands go: the process's stdout.
	Log io.Writer
	// Random makes delimiters and stop tokens [crypto/rand].
	Random io.Reader

	mu sync.Mutex
}

// GitHubFromEnv returns the integration when GITHUB_ACTIONS is "true", else nil.
func GitHubFromEnv(getenv func(string) string, log io.Writer) *GitHub {
	if getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	return &GitHub{Output: getenv("GITHUB_OUTPUT"), StepSummary: getenv("GITHUB_STEP_SUMMARY"), Log: log}
}

// MaxStepSummary is GitHub's limit on one step's summary.
const MaxStepSummary = 1 << 20

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

// Mask registers secret values with the log masker (each line of a multi-line value).
func (g *GitHub) Mask(values []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, v := range values {
		for _, line := range strings.Split(v, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				fmt.Fprintf(g.Log, "::add-mask::%s\n", escapeData(line))
			}
		}
	}
}

// sessionLog returns a sink that renders a session as text and, when the session ends,
// writes it to the log as one collapsible group, with workflow-command processing
// stopped around it so model output cannot issue commands, followed by an annotation
// when the session failed.
func (g *GitHub) sessionLog(key string) sink.Sink {
	gs := &githubSession{g: g, key: key}
	gs.text = sink.NewText(&gs.buf, sink.TextOptions{})
	return gs
}

type githubSession struct {
	g    *GitHub
	key  string
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
	fmt.Fprintf(g.Log, "::group::%s\n::stop-commands::%s\n%s", escapeData(title), token, body)
	if !strings.HasSuffix(body, "\n") {
		fmt.Fprintln(g.Log)
	}
	fmt.Fprintf(g.Log, "::%s::\n::endgroup::\n", token)
	if s.res != nil && s.res.Status != protocol.StatusSuccess {
		level := "error"
		if s.res.Status == protocol.StatusCancelled {
			level = "warning"
		}
		msg := string(s.res.Status)
		if s.res.Error != nil {
			msg += ": " + s.res.Error.Message
		}
		fmt.Fprintf(g.Log, "::%s title=%s::%s\n", level, escapeProperty("agentrun "+s.key), escapeData(clip(msg, 2000)))
	}
	return err
}

// Report writes the step outputs and appends summary.md to the step summary.
func (g *GitHub) Report(sum *Summary, out string) error {
	if g.Output != "" {
		status := "success"
		if sum.Totals.Failed > 0 || sum.Totals.BudgetExhausted {
			status = "failure"
		}
		abs, err := filepath.Abs(filepath.Join(out, SummaryFile))
		if err != nil {
			return err
		}
		outputs := [][2]string{
			{"status", status},
			{"passed", fmt.Sprint(sum.Totals.Passed)},
			{"failed", fmt.Sprint(sum.Totals.Failed)},
			{"total-cost-usd", fmt.Sprintf("%.6f", sum.Totals.CostUSD)},
			{"summary-json", abs},
		}
		if err := g.writeOutputs(outputs); err != nil {
			return err
		}
	}
	if g.StepSummary != "" {
		md := sum.Markdown()
		if len(md) > MaxStepSummary-1024 {
			md = clip(md, MaxStepSummary-1024) + "\n\n(truncated: the full report is summary.md in the run's artifacts)\n"
		}
		f, err := os.OpenFile(g.StepSummary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		if _, err := f.WriteString(md + "\n"); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	return nil
}

// writeOutputs appends name/value pairs to $GITHUB_OUTPUT in the heredoc form with a
// random delimiter that appears in neither name nor value.
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
		f.Close()
		return err
	}
	return f.Close()
}

package sink

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentrun/agentrun/protocol"
)

// TextOptions configures the plain-text rendering.
type TextOptions struct {
	// Prefix is put before every line, such as "[fix-vet] " in a run's log.
	Prefix string
	// Color adds ANSI colors: thinking dimmed, errors red, success green.
	Color bool
}

// Text renders messages as plain text for people: run.log, transcript.txt,
// `exec --output-format human` and `replay`. Text deltas are joined into lines; a tool
// call is one line with its main argument, its result a short preview under it.
//
// Every line ends in "\n" and starts with the prefix. Each Write writes whole lines
// only, in one Write call, so several Text sinks can share one writer; an unfinished
// line of text waits for its newline, for a message of another kind, or for Close. Text
// is safe for concurrent use and does not close its writer.
type Text struct {
	mu     sync.Mutex
	w      io.Writer
	opts   TextOptions
	out    []byte // the lines of the current Write
	closed bool

	partial       []byte        // the unfinished line of a text or thinking stream
	partialKind   protocol.Kind // KindText or KindThinking; 0 when no stream is open
	partialParent string
}

// maxPartial bounds an unfinished line: a longer one is written out in pieces of this
// size.
const maxPartial = 16 << 10

// ANSI styles.
const (
	styleNone   = ""
	styleBold   = "1"
	styleDim    = "2"
	styleRed    = "31"
	styleGreen  = "32"
	styleYellow = "33"
)

// Markers at the start of lines.
const (
	indentSub   = "  ┊ " // a message of a sub-agent
	leadResult  = "  ⎿  "
	leadMore    = "     "
	markThought = "✻"
)

// NewText returns a sink rendering text to w.
func NewText(w io.Writer, opts TextOptions) *Text {
	return &Text{w: w, opts: opts}
}

// Write renders m and writes the lines it completes.
func (t *Text) Write(m protocol.Message) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	t.out = reuse(t.out)
	t.render(m)
	if len(t.out) == 0 {
		return nil
	}
	return writeLines(t.w, t.out, "text")
}

// Close writes the unfinished line, if any, and flushes the writer. Later writes fail
// with ErrClosed.
func (t *Text) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	t.out = reuse(t.out)
	t.endStream()
	if len(t.out) > 0 {
		return writeLines(t.w, t.out, "text")
	}
	if err := flush(t.w); err != nil {
		return fmt.Errorf("flush text: %w", err)
	}
	return nil
}

// line appends one output line: prefix, indent, s in style. s must not hold a newline.
func (t *Text) line(parent, style, s string) {
	start := len(t.out)
	t.out = append(t.out, t.opts.Prefix...)
	if parent != "" {
		t.out = append(t.out, indentSub...)
	}
	s = strings.TrimRight(s, " \t")
	switch {
	case s == "":
		t.out = append(t.out[:start], bytes.TrimRight(t.out[start:], " \t")...)
	case t.opts.Color && style != styleNone:
		t.out = append(t.out, "\x1b["+style+"m"...)
		t.out = append(t.out, s...)
		t.out = append(t.out, "\x1b[0m"...)
	default:
		t.out = append(t.out, s...)
	}
	t.out = append(t.out, '\n')
}

// lines appends the lines of a preview, the first after lead.
func (t *Text) lines(parent, style, lead string, ls []string) {
	for i, l := range ls {
		if i == 0 {
			t.line(parent, style, lead+l)
		} else {
			t.line(parent, style, strings.Repeat(" ", utf8.RuneCountInString(lead))+l)
		}
	}
}

func (t *Text) render(m protocol.Message) {
	switch m.Kind {
	case protocol.KindText, protocol.KindThinking:
		t.delta(m)
		if m.Kind == protocol.KindThinking && (m.Signature != "" || m.Redacted != "") {
			t.endStream() // the thinking block is complete
			if m.Redacted != "" {
				t.line(m.Parent, styleDim, markThought+" [redacted thinking]")
			}
		}
		return
	default:
		// Every other kind ends the stream and is written below.
	}
	t.endStream()
	p := m.Parent
	switch m.Kind {
	case protocol.KindToolCall:
		t.line(p, styleBold, "⏺ "+callSummary(m.Call))
	case protocol.KindToolResult:
		ls := preview(m.Result.Content, false)
		style := styleDim
		if m.Result.IsError {
			style = styleRed
			ls[0] = "✗ " + ls[0]
		}
		t.lines(p, style, leadResult, ls)
	case protocol.KindUsage:
		t.line(p, styleDim, usageLine(m))
	case protocol.KindStop:
		switch m.Stop {
		case "", protocol.StopEndTurn, protocol.StopToolUse, protocol.StopSequence:
		default:
			t.line(p, styleYellow, "■ stop: "+fold(string(m.Stop), maxCallArg))
		}
	case protocol.KindContextUpdate:
		s := "◇ context " + fold(m.Context.Kind, maxCallArg)
		if m.Context.Trigger != "" {
			s += " (" + fold(m.Context.Trigger, maxCallArg) + ")"
		}
		t.line(p, styleDim, s)
	case protocol.KindError:
		head := "✗ error"
		if m.Err.Kind != "" {
			head += "[" + fold(string(m.Err.Kind), 40) + "]"
		}
		ls := strings.Split(strings.TrimSpace(Clean(m.Err.Message)), "\n")
		t.lines(p, styleRed, head+": ", ls)
	case protocol.KindRetry:
		t.line(p, styleYellow, fmt.Sprintf("↻ retry %d in %s: %s", m.Attempt, millis(m.DelayMS), fold(m.Reason, 2*maxCallArg)))
	case protocol.KindSessionStart:
		t.line(p, styleBold, sessionLine(m.Session))
	case protocol.KindMCPStatus:
		style, line := mcpLine(m.MCP)
		t.line(p, style, line)
	case protocol.KindSubAgentStart, protocol.KindSubAgentResult, protocol.KindSubAgentEnd:
		t.subAgent(m)
	case protocol.KindResult:
		t.result(m)
	case protocol.KindText, protocol.KindThinking:
		// Streamed above.
	case protocol.KindSandboxViolation:
		// The transcript does not show it; events.jsonl and the claude stream do.
	}
}

// delta adds a text or thinking delta to its stream and writes the lines it completes.
func (t *Text) delta(m protocol.Message) {
	if t.partialKind != 0 && (t.partialKind != m.Kind || t.partialParent != m.Parent) {
		t.endStream()
	}
	if m.Text == "" {
		return
	}
	t.partialKind, t.partialParent = m.Kind, m.Parent
	t.partial = append(t.partial, m.Text...)
	done := 0
	for {
		i := bytes.IndexByte(t.partial[done:], '\n')
		if i < 0 {
			break
		}
		t.streamLine(string(t.partial[done : done+i]))
		done += i + 1
	}
	for len(t.partial)-done > maxPartial {
		end := done + maxPartial
		for k := end - 1; k >= max(done, end-utf8.UTFMax); k-- {
			if utf8.RuneStart(t.partial[k]) {
				if !utf8.FullRune(t.partial[k:end]) {
					end = k // keep a split character for the next piece
				}
				break
			}
		}
		t.streamLine(string(t.partial[done:end]))
		done = end
	}
	t.partial = t.partial[:copy(t.partial, t.partial[done:])]
}

func (t *Text) streamLine(s string) {
	s = Clean(s)
	if t.partialKind == protocol.KindThinking {
		t.line(t.partialParent, styleDim, markThought+" "+s)
		return
	}
	t.line(t.partialParent, styleNone, s)
}

// endStream writes the unfinished line of the open stream and closes the stream.
func (t *Text) endStream() {
	if t.partialKind == 0 {
		return
	}
	if len(t.partial) > 0 {
		t.streamLine(string(t.partial))
	}
	t.partial = t.partial[:0]
	t.partialKind, t.partialParent = 0, ""
}

func usageLine(m protocol.Message) string {
	var b strings.Builder
	b.WriteString("· ")
	switch m.UsageKind {
	case "", "agent":
	case "sub_agent":
		b.WriteString("sub-agent ")
		if m.SubSession != "" {
			b.WriteString(fold(m.SubSession, 40) + " ")
		}
	default:
		b.WriteString(fold(m.UsageKind, 20) + " ")
	}
	b.WriteString("tokens " + tokens(m.Usage.Input, m.Usage.Output))
	if m.Usage.CacheRead != 0 || m.Usage.CacheCreation != 0 {
		b.WriteString(" · cache " + thousands(m.Usage.CacheRead) + " read / " + thousands(m.Usage.CacheCreation) + " new")
	}
	return b.String()
}

func sessionLine(s *protocol.SessionStart) string {
	if s == nil {
		s = &protocol.SessionStart{}
	}
	parts := []string{"● session " + fold(s.SessionID, maxCallArg)}
	if s.JobID != "" {
		parts = append(parts, "job "+fold(s.JobID, maxCallArg))
	}
	if model := strings.Trim(s.Provider+"/"+s.Model, "/"); model != "" {
		parts = append(parts, fold(model, maxCallArg))
	}
	if s.Cwd != "" {
		parts = append(parts, fold(s.Cwd, maxCallArg))
	}
	if len(s.Tools) > 0 {
		parts = append(parts, plural(len(s.Tools), "tool"))
	}
	return strings.Join(parts, " · ")
}

func (t *Text) subAgent(m protocol.Message) {
	s := m.Sub
	if s == nil {
		s = &protocol.SubAgent{}
	}
	id := fold(s.SessionID, maxCallArg)
	switch m.Kind {
	case protocol.KindSubAgentStart:
		what := s.Description
		if what == "" {
			what = s.Prompt
		}
		t.line(m.Parent, styleBold, "▶ sub-agent "+id+": "+fold(what, maxCallArg))
	case protocol.KindSubAgentResult:
		style := styleNone
		if s.Status != "ok" {
			style = styleRed
		}
		t.line(m.Parent, style, "◀ sub-agent "+id+" "+fold(s.Status, 20)+" · "+tokens(s.Usage.Input, s.Usage.Output))
		t.lines(m.Parent, styleDim, leadResult, preview(s.Text, false))
	case protocol.KindSubAgentEnd:
		t.line(m.Parent, styleNone, "■ sub-agent "+id+" ended: "+fold(s.Status, 20))
	default:
		// subAgent is called for the sub-agent kinds only.
	}
}

func (t *Text) result(m protocol.Message) {
	r := m.Final
	if r == nil {
		r = &protocol.Result{}
	}
	ok := r.Status == protocol.StatusSuccess
	mark, style := "✗", styleRed
	if ok {
		mark, style = "✓", styleGreen
	}
	status := string(r.Status)
	if status == "" {
		status = "finished"
	}
	parts := []string{mark + " " + fold(status, 40), plural(r.NumTurns, "turn"), millis(r.DurationMS),
		tokens(r.Usage.Input, r.Usage.Output)}
	if r.TotalCostUSD != nil {
		parts = append(parts, fmt.Sprintf("$%.4f", *r.TotalCostUSD))
	}
	if r.Error != nil && !ok {
		parts = append(parts, fold(r.Error.Describe(r.Status), 2*maxCallArg))
	}
	t.line(m.Parent, style, strings.Join(parts, " · "))
	for _, c := range r.Checks {
		if c.Passed {
			t.line(m.Parent, styleGreen, "  ✓ check "+fold(c.Name, maxCallArg)+" · "+millis(c.DurationMS))
			continue
		}
		t.line(m.Parent, styleRed, fmt.Sprintf("  ✗ check %s · exit %d · %s", fold(c.Name, maxCallArg), c.ExitCode, millis(c.DurationMS)))
		t.lines(m.Parent, styleDim, "  "+leadResult, preview(c.Output, true))
	}
}

package agent

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/textcut"
)

// Compaction triggers.
const (
	// TriggerAuto is the check before every model call.
	TriggerAuto = "auto"
	// TriggerOverflow forces compaction after the model ran out of context window.
	TriggerOverflow = "overflow"
	// TriggerForced forces compaction (a caller asked for it).
	TriggerForced = "forced"
)

// CompactConfig tunes the seed's cost model of compaction. Prices are USD per million
// tokens; sizes are tokens. Zero values take the defaults in brackets.
type CompactConfig struct {
	// Disabled turns compaction off.
	Disabled bool
	// MaxContext is the context budget; a call that used more than 90% of it forces
	// compaction [200000].
	MaxContext int64
	// PInput, PCache and POut price input, cache-read and output tokens [3.0, 0.30, 15.0].
	PInput, PCache, POut float64
	// V is the size of the stable prefix (system prompt and tools) [5000].
	V float64
	// S is the expected size of a summary [500].
	S float64
	// Beta weighs the information lost by summarising [0.03].
	Beta float64
	// QP weighs the quality gained by a shorter context [0.2].
	QP float64
	// R is the retention of each successive summary [0.8].
	R float64
	// MinKeepRatio is the smallest share of the window kept [0.25].
	MinKeepRatio float64
	// BaselineE is the expected number of further user turns [8]; EFixed, when set,
	// replaces the estimate; L, when set, replaces the measured calls per user turn.
	BaselineE, EFixed, L float64
}

func (c *CompactConfig) defaults() {
	set := func(p *float64, v float64) {
		if *p <= 0 {
			*p = v
		}
	}
	if c.MaxContext <= 0 {
		c.MaxContext = 200_000
	}
	set(&c.PInput, 3.0)
	set(&c.PCache, 0.30)
	set(&c.POut, 15.0)
	set(&c.V, 5000)
	set(&c.S, 500)
	set(&c.Beta, 0.03)
	set(&c.QP, 0.2)
	set(&c.R, 0.8)
	set(&c.MinKeepRatio, 0.25)
	set(&c.BaselineE, 8)
}

// DecisionInput is everything the compaction decision looks at.
type DecisionInput struct {
	Trigger string
	// TurnTokens estimates the tokens of each conversation turn.
	TurnTokens []int64
	// CutOK[i] says whether the kept window may start at turn i.
	CutOK []bool
	// UserTurns, Requests and CompactRequests are the session's counters; TotalInput
	// the input tokens sent so far (cache reads included); CurrentContext the size of
	// the last call.
	UserTurns, Requests, CompactRequests int
	TotalInput, CurrentContext           int64
	// RemainingRequests, when positive, is the expected number of further model calls
	// that would resend the window. It replaces the seed's estimate (further user turns
	// times calls per user turn), which assumes an interactive session: a headless
	// session has one user turn, and its remaining calls are bounded by max_turns.
	RemainingRequests int
	Config            CompactConfig
}

// Decision says how many trailing turns to keep; Keep 0 means do not compact.
type Decision struct {
	Keep    int
	Reason  string // "cost", "valve", "forced" or "" when not compacting
	Benefit float64
}

// Decide is the seed's cost model: it keeps the number of trailing turns whose
// compaction saves the most money over the rest of the session, aligned so the kept
// window starts where a window may start. Without a positive benefit it still compacts
// when forced or when the last call used more than 90% of the context budget. It is a
// pure function.
func Decide(in DecisionInput) Decision {
	c := in.Config
	c.defaults()
	nr := len(in.TurnTokens)
	if nr < 2 || len(in.CutOK) != nr {
		return Decision{}
	}
	var total float64
	for _, t := range in.TurnTokens {
		total += float64(t)
	}
	t := float64(in.UserTurns)
	var e float64
	switch {
	case c.EFixed > 0:
		e = c.EFixed
	default:
		floor := c.BaselineE / 2
		if c.BaselineE <= 1 {
			floor = 2
		}
		e = math.Max(c.BaselineE-t, floor)
	}
	l := c.L
	if l <= 0 {
		l = 5
		if in.UserTurns > 0 && in.Requests > 0 {
			l = float64(in.Requests) / t
		}
	}
	l = math.Max(l, 1)
	avg := 4000.0
	if in.Requests > 0 {
		avg = float64(in.TotalInput) / float64(in.Requests)
	}
	r := e * l
	if in.RemainingRequests > 0 {
		r = float64(in.RemainingRequests)
	}
	rt := math.Max(math.Pow(c.R, float64(in.CompactRequests+1)), 0.37)
	m := float64(c.MaxContext)
	minKeep := max(3, int(math.Round(float64(nr)*c.MinKeepRatio)))

	best, bestBenefit := 0, 0.0
	kept := 0.0
	for k := 1; k < nr; k++ {
		kept += float64(in.TurnTokens[nr-k])
		if k < minKeep {
			continue
		}
		h := total - kept
		if h <= 0 {
			continue
		}
		savings := (r - 1) * c.PCache * h / 1e6
		cacheMiss := (c.S + kept) * (c.PInput - c.PCache) / 1e6
		compactCost := (c.PCache*(c.V+h) + c.PInput*70 + c.POut*c.S) / 1e6
		infoLoss := c.Beta * (1 - rt) * r * avg * c.PInput / 1e6
		quality := c.QP * c.PInput * ((c.V+total)*(c.V+total) - (c.V+kept)*(c.V+kept)) / (m * 1e6)
		benefit := savings - cacheMiss - compactCost - infoLoss + quality
		if best == 0 || benefit > bestBenefit {
			best, bestBenefit = k, benefit
		}
	}
	if best > 0 && bestBenefit > 0 {
		keep := align(in.CutOK, best)
		maxKeep := nr
		if c.MinKeepRatio <= 0.5 {
			maxKeep = int(float64(nr) * (1 - c.MinKeepRatio))
		}
		if keep > 0 && keep < nr && keep <= maxKeep {
			return Decision{Keep: keep, Reason: "cost", Benefit: bestBenefit}
		}
	}
	forced := in.Trigger == TriggerForced || in.Trigger == TriggerOverflow
	valve := float64(in.CurrentContext) > 0.9*m
	if !forced && !valve {
		return Decision{}
	}
	keep := turnKeep(in.CutOK, c.MinKeepRatio)
	if keep <= 0 || keep >= nr {
		return Decision{}
	}
	reason := "valve"
	if forced {
		reason = "forced"
	}
	return Decision{Keep: keep, Reason: reason, Benefit: bestBenefit}
}

// align moves the cut earlier (keeping more) until the window starts where it may.
// It returns 0 when no valid start keeps less than everything.
func align(cutOK []bool, keep int) int {
	nr := len(cutOK)
	for cut := nr - keep; cut > 0; cut-- {
		if cutOK[cut] {
			return nr - cut
		}
	}
	return 0
}

// turnKeep keeps the most recent share of the places a window may start (at least
// one), and everything after.
func turnKeep(cutOK []bool, ratio float64) int {
	var starts []int
	for i := 1; i < len(cutOK); i++ {
		if cutOK[i] {
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 {
		return 0
	}
	n := max(1, int(math.Round(float64(len(starts))*ratio)))
	if n > len(starts) {
		n = len(starts)
	}
	return len(cutOK) - starts[len(starts)-n]
}

// CutPoints says, for each turn of a window, whether a kept window may start there: at a
// real user message, or at an assistant turn (a synthetic user message then restates
// the task). A window never starts at tool results, so no result loses its call.
func CutPoints(turns []protocol.Turn) []bool {
	ok := make([]bool, len(turns))
	for i, t := range turns {
		switch {
		case i == 0:
			ok[i] = true
		case t.IsUserText():
			ok[i] = true
		case t.Role == protocol.RoleAssistant && turns[i-1].Role == protocol.RoleUser:
			ok[i] = true
		}
	}
	return ok
}

// TurnTokens estimates the tokens of a turn: its bytes over four, plus one.
func TurnTokens(t protocol.Turn) int64 {
	n := 16
	for _, b := range t.Blocks {
		n += 24 + len(b.Text) + len(b.Signature) + len(b.Data) + len(b.ID) + len(b.Name) +
			len(b.Input) + len(b.ToolUseID) + len(b.Content)
	}
	return int64((n+3)/4 + 1)
}

// compactInstruction asks for the five-field summary. It starts with the marker the
// scripted model recognises.
const compactInstruction = protocol.CompactMarker + ` Compact the context: summarise the conversation above into a context snapshot that will replace it. ` +
	`Merge in the current context-snapshot section of the system prompt, if there is one. Do not call tools. ` +
	`Answer in plain text with exactly these five fields, each starting a line:
Task focus:
Latest request:
Progress:
Tool evidence:
Reflections:`

// resumeNote opens a compacted window that would otherwise start with an assistant turn.
const resumeNote = "[Earlier turns were compacted into the context-snapshot section of the system prompt.]"

// maybeCompact runs the decision and, when it says so, the compaction. It reports
// whether the window was compacted. A failed summary leaves the window as it was and
// says so in an error event. turns is the number of model calls of this run so far:
// the session expects as many more again, within max_turns.
func (s *Session) maybeCompact(ctx context.Context, trigger string, turns int) bool {
	if s.cfg.Compaction.Disabled || len(s.conv) < 2 {
		return false
	}
	tokens := make([]int64, len(s.conv))
	for i, t := range s.conv {
		tokens[i] = TurnTokens(t)
	}
	u := s.stats.Usage()
	dec := Decide(DecisionInput{
		Trigger: trigger, TurnTokens: tokens, CutOK: CutPoints(s.conv),
		UserTurns: s.stats.UserTurns, Requests: s.stats.Requests, CompactRequests: s.stats.CompactRequests,
		TotalInput: u.Input + u.CacheRead + u.CacheCreation, CurrentContext: s.stats.CurrentContext,
		RemainingRequests: max(1, min(s.cfg.MaxTurns-turns, turns)),
		Config:            s.cfg.Compaction,
	})
	if dec.Keep <= 0 {
		return false
	}
	cut := len(s.conv) - dec.Keep
	cctx := ctx
	var span Span
	if s.deps.Observer != nil {
		cctx, span = s.deps.Observer.Start(ctx, Op{Kind: OpCompact, SessionID: s.cfg.SessionID, Trigger: trigger,
			Reason: dec.Reason, Turns: len(s.conv), Keep: dec.Keep})
	}
	summary, err := s.summarise(cctx, s.conv[:cut])
	if err != nil {
		e := protocol.Error{Kind: protocol.ErrCompact, Message: "compaction failed, continuing uncompacted: " + err.Error()}
		s.record(protocol.Message{Kind: protocol.KindError, Err: e})
		if span != nil {
			span.End(SpanEnd{Err: &e})
		}
		return false
	}
	if span != nil {
		defer span.End(SpanEnd{})
	}
	kept := append([]protocol.Turn(nil), s.conv[cut:]...)
	if !kept[0].IsUserText() {
		task := s.firstUserText()
		note := resumeNote
		if task != "" {
			note += "\n\nThe task, as first given:\n" + task
		}
		kept = append([]protocol.Turn{protocol.UserText(note)}, kept...)
	}
	s.conv, s.summary = kept, summary
	s.stats.CurrentContext = 0
	if err := s.persistAll(); err != nil && s.sinkErr == nil {
		s.sinkErr = err
	}
	s.record(protocol.Message{Kind: protocol.KindContextUpdate, Context: protocol.ContextUpdate{Kind: "compact", Trigger: trigger}})
	return true
}

// firstUserText returns the first user text of the window, clipped.
func (s *Session) firstUserText() string {
	for _, t := range s.conv {
		if t.IsUserText() {
			var b strings.Builder
			for _, bl := range t.Blocks {
				b.WriteString(bl.Text)
			}
			text := b.String()
			if strings.HasPrefix(text, resumeNote) {
				if i := strings.Index(text, "The task, as first given:\n"); i >= 0 {
					return text[i+len("The task, as first given:\n"):]
				}
				continue
			}
			return textcut.Clip(text, 4000, textcut.Ellipsis)
		}
	}
	return ""
}

// summarise asks the model for the summary of dropped, with the session's own system
// prompt and tools so the request shares the cached prefix of earlier calls, and a
// tool choice of none so that the answer is the summary, not a tool call.
func (s *Session) summarise(ctx context.Context, dropped []protocol.Turn) (string, error) {
	msgs := append([]protocol.Turn(nil), dropped...)
	last := len(msgs) - 1
	if msgs[last].Role == protocol.RoleUser {
		t := msgs[last]
		t.Blocks = append(append([]protocol.Block(nil), t.Blocks...), protocol.Block{Type: protocol.BlockText, Text: compactInstruction})
		msgs[last] = t
	} else {
		msgs = append(msgs, protocol.UserText(compactInstruction))
	}
	req := s.request()
	req.Messages = msgs
	req.Thinking = protocol.Thinking{Mode: "disabled"}
	req.ToolChoice = protocol.ToolChoiceNone // the tools stay for the cached prefix; the answer is text
	var text strings.Builder
	var usage protocol.Usage
	var failure *protocol.Error
	var stop protocol.StopReason
	stopped := false
	sctx := ctx
	var span Span
	if s.deps.Observer != nil {
		sctx, span = s.deps.Observer.Start(ctx, Op{Kind: OpChat, SessionID: s.cfg.SessionID, Provider: s.cfg.Provider, Model: s.cfg.Model,
			Server: s.cfg.Server, Request: req})
	}
	for m := range s.deps.Provider.Stream(sctx, req) {
		switch m.Kind {
		case protocol.KindText:
			text.WriteString(m.Text)
		case protocol.KindUsage:
			usage = m.Usage
		case protocol.KindRetry:
			if span != nil {
				span.Retry(m, text.Len() > 0 || usage != (protocol.Usage{}), usage)
			}
			text.Reset()
			usage = protocol.Usage{}
		case protocol.KindError:
			e := m.Err
			failure = &e
		case protocol.KindStop:
			stopped, stop = true, m.Stop
		default:
			// The summary is the text alone: thinking and tool calls are dropped, and
			// the other kinds are the session's own, which a provider never sends.
		}
	}
	s.stats.CompactRequests++
	var usd float64
	var priced bool
	if usage != (protocol.Usage{}) {
		usd, priced = s.account(s.cfg.Model, usage)
		s.record(protocol.Message{Kind: protocol.KindUsage, Usage: usage, UsageKind: "compact"})
	}
	if span != nil {
		span.End(SpanEnd{Err: failure, Stop: stop, Output: []protocol.Block{{Type: protocol.BlockText, Text: text.String()}},
			Usage: usage, CostUSD: usd, CostKnown: priced})
	}
	switch {
	case failure != nil:
		return "", fmt.Errorf("summary request: %s: %s", failure.Kind, failure.Message)
	case !stopped:
		return "", fmt.Errorf("summary request: no stop")
	case strings.TrimSpace(text.String()) == "":
		return "", fmt.Errorf("summary request: empty summary")
	}
	return strings.TrimSpace(text.String()), nil
}

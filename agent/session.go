package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/policy"
	"github.com/agentrun/agentrun/protocol"
)

// End says why a Run ended.
type End uint8

// The ways a Run ends.
const (
	// EndCompleted: the model ended its turn (end_turn, stop_sequence, refusal, …).
	EndCompleted End = iota + 1
	// EndMaxTurns: the model still wanted to call tools after MaxTurns calls.
	EndMaxTurns
	// EndMaxTokens: a response was cut off at max_tokens, or passed Config.Limits.
	EndMaxTokens
	// EndProvider: the provider failed (Outcome.Err says how).
	EndProvider
	// EndCancelled: the context ended (the caller knows why).
	EndCancelled
	// EndBudget: the session's budget is spent.
	EndBudget
	// EndSink: an event could not be written; the session stopped to lose nothing else.
	EndSink
)

func (e End) String() string {
	switch e {
	case EndCompleted:
		return "completed"
	case EndMaxTurns:
		return "max_turns"
	case EndMaxTokens:
		return "max_tokens"
	case EndProvider:
		return "provider"
	case EndCancelled:
		return "cancelled"
	case EndBudget:
		return "budget"
	case EndSink:
		return "sink"
	}
	return fmt.Sprintf("End(%d)", uint8(e))
}

// Outcome is what a Run reports.
type Outcome struct {
	End End
	// StopReason is the provider's last stop reason.
	StopReason protocol.StopReason
	// Err describes a failure (nil when End is EndCompleted).
	Err *protocol.Error
	// Turns counts the model calls of this Run; CompletedTurns those that ended with
	// a stop reason rather than a failure.
	Turns, CompletedTurns int
	// Usage and CostUSD are what this Run spent (compaction and sub-agents included),
	// like Turns and APITime: a resumed session's earlier invocations are not in them.
	// CostKnown is false when some model of the session had no price.
	Usage     protocol.Usage
	CostUSD   float64
	CostKnown bool

	// baseUsage and baseCost are the session's totals when this Run began.
	baseUsage protocol.Usage
	baseCost  float64
	// APITime is the time spent waiting for models, tool time excluded.
	APITime time.Duration
	// FinalText is the text of the last assistant turn.
	FinalText string
}

// Session is one conversation with a model. It is not safe for concurrent use.
type Session struct {
	cfg   Config
	deps  Deps
	depth int
	// parent is the id of the Task call that started this sub-agent, "" at the top.
	parent string

	tools   map[string]tools.Tool
	specs   []protocol.ToolSpec
	env     tools.Env
	prompt  promptParts
	conv    []protocol.Turn
	summary string
	stats   Stats
	sinkErr error
}

// New prepares a session, loading its saved state from deps.Store when there is one.
func New(cfg Config, deps Deps) (*Session, error) {
	return newSession(cfg, deps, 0)
}

func newSession(cfg Config, deps Deps, depth int) (*Session, error) {
	cfg.defaults()
	deps.defaults()
	if deps.Provider == nil || deps.Sink == nil {
		return nil, errors.New("new session: provider and sink are required")
	}
	s := &Session{cfg: cfg, deps: deps, depth: depth, tools: map[string]tools.Tool{}}
	mode, perr := policy.Parse(cfg.BashMode)
	s.env = tools.Env{
		Workspace: cfg.Workspace, Home: cfg.Home, Policy: mode, Timeout: cfg.ToolTimeout,
		ProcEnv: cfg.ProcEnv, MaxOutput: cfg.MaxOutput, Activity: deps.Activity, Groups: deps.Groups,
	}
	if err := s.selectTools(); err != nil {
		return nil, err
	}
	prompt, err := buildPrompt(cfg, s.specNames())
	if err != nil {
		return nil, err
	}
	s.prompt = prompt
	if perr != nil {
		// An invalid mode denies everything; say so once in the prompt's rules.
		s.prompt.notes = append(s.prompt.notes, "The bash_mode is invalid ("+perr.Error()+"), so every command and file access is denied.")
	}
	if deps.Store != nil {
		st, err := deps.Store.Load()
		if err != nil {
			return nil, fmt.Errorf("new session: %w", err)
		}
		s.conv, s.summary, s.stats = st.Turns, st.Summary, st.Stats
	}
	return s, nil
}

// selectTools resolves the configured tool names.
func (s *Session) selectTools() error {
	names := s.cfg.Tools
	if names == nil {
		names = AllTools()
	}
	for _, name := range names {
		if name == TaskToolName {
			if s.depth >= s.cfg.SubAgents.MaxDepth {
				continue // at the depth limit Task is not offered
			}
			t := &taskTool{parent: s}
			s.tools[name] = t
			s.specs = append(s.specs, t.Spec())
			continue
		}
		t, ok := tools.Lookup(name)
		if !ok {
			return fmt.Errorf("new session: unknown tool %q", name)
		}
		s.tools[name] = t
		s.specs = append(s.specs, t.Spec())
	}
	if s.deps.Servers != nil {
		for _, sp := range s.deps.Servers.Specs() {
			if _, taken := s.tools[sp.Name]; taken {
				continue
			}
			s.tools[sp.Name] = serverTool{spec: sp, server: s.deps.Servers.Server(sp.Name), set: s.deps.Servers}
			s.specs = append(s.specs, sp)
		}
	}
	return nil
}

// serverTool is a tool an MCP server serves.
type serverTool struct {
	spec   protocol.ToolSpec
	server string
	set    ServerTools
}

func (t serverTool) Spec() protocol.ToolSpec { return t.spec }

func (t serverTool) Run(ctx context.Context, call tools.Call) tools.Result {
	return t.set.Call(ctx, t.spec.Name, call.Input)
}

// serverOf names the MCP server of a tool, "" for a built-in one.
func (s *Session) serverOf(name string) string {
	if t, ok := s.tools[name].(serverTool); ok {
		return t.server
	}
	return ""
}

func (s *Session) specNames() []string {
	out := make([]string, len(s.specs))
	for i, sp := range s.specs {
		out[i] = sp.Name
	}
	return out
}

// AllTools lists every tool name, built-in tools first and Task last.
func AllTools() []string {
	var out []string
	for _, t := range tools.Builtin() {
		out = append(out, t.Spec().Name)
	}
	return append(out, TaskToolName)
}

// Conversation returns a copy of the conversation window.
func (s *Session) Conversation() []protocol.Turn {
	return append([]protocol.Turn(nil), s.conv...)
}

// Stats returns the session's counters.
func (s *Session) Stats() Stats { return s.stats }

// Start writes the session_start event.
func (s *Session) Start() error {
	return s.emit(protocol.Message{Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{
		SessionID: s.cfg.SessionID, JobID: s.cfg.JobID, Provenance: s.cfg.Provenance,
		Cwd: s.cfg.Workspace, Tools: s.specNames(), TS: s.deps.Now().UTC().Format(protocol.TimeFormat),
		Sandbox: s.cfg.Sandbox, MCPServers: s.cfg.MCPServers,
	}})
}

// emit writes m to the sink and remembers the first failure.
func (s *Session) emit(m protocol.Message) error {
	if err := s.deps.Sink.Write(m); err != nil {
		if s.sinkErr == nil {
			s.sinkErr = err
		}
		return err
	}
	return nil
}

// record writes m like emit where its failure needs no handling on the spot: emit keeps
// the first one in s.sinkErr, which ends the session at the loop's next check (an event
// written as the session ends already has its outcome).
func (s *Session) record(m protocol.Message) {
	_ = s.emit(m)
}

// Run sends prompt as the next user message and works until the model ends its turn or
// a limit stops it.
func (s *Session) Run(ctx context.Context, prompt string) Outcome {
	out := Outcome{baseUsage: s.stats.Usage(), baseCost: s.stats.CostUSD}
	var err error
	if s.addUserText(prompt) {
		err = s.persistAll()
	} else {
		err = s.persistAppend(len(s.conv) - 1)
	}
	s.stats.UserTurns++
	if err != nil {
		return s.finish(out, EndSink, &protocol.Error{Kind: protocol.ErrInternal, Message: err.Error()})
	}
	for {
		if ctx.Err() != nil {
			return s.finish(out, EndCancelled, cancelError(ctx))
		}
		if s.sinkErr != nil {
			return s.finish(out, EndSink, &protocol.Error{Kind: protocol.ErrInternal, Message: "write event: " + s.sinkErr.Error()})
		}
		if out.Turns >= s.cfg.MaxTurns {
			e := &protocol.Error{Kind: protocol.ErrMaxTurns, Message: fmt.Sprintf("max turns (%d) reached", s.cfg.MaxTurns)}
			s.record(protocol.Message{Kind: protocol.KindError, Err: *e})
			return s.finish(out, EndMaxTurns, e)
		}
		if s.stats.Requests > 0 {
			s.maybeCompact(ctx, TriggerAuto, out.Turns)
		}
		res := s.call(ctx)
		out.Turns++
		if res.err == nil && res.stop != "" {
			out.CompletedTurns++
		}
		out.APITime += res.apiTime
		out.StopReason = res.stop
		if tooLarge := res.err != nil && res.err.Kind == protocol.ErrTooLarge; !tooLarge {
			// A runaway answer is not the final text: its deltas are in the artifacts,
			// and a copy in the result would only repeat megabytes of them.
			if text := res.text(); text != "" || len(res.blocks) > 0 {
				out.FinalText = text
			}
		}
		if err := s.persistCall(res); err != nil {
			return s.finish(out, EndSink, &protocol.Error{Kind: protocol.ErrInternal, Message: err.Error()})
		}
		switch {
		case s.sinkErr != nil:
			return s.finish(out, EndSink, &protocol.Error{Kind: protocol.ErrInternal, Message: "write event: " + s.sinkErr.Error()})
		case ctx.Err() != nil:
			return s.finish(out, EndCancelled, cancelError(ctx))
		case res.err != nil && res.err.Kind == protocol.ErrTooLarge:
			return s.finish(out, EndMaxTokens, res.err) // a runaway answer: its error event is out
		case res.err != nil:
			return s.finish(out, EndProvider, res.err)
		case s.overBudget():
			e := &protocol.Error{Kind: protocol.ErrBudget, Message: s.budgetMessage()}
			s.record(protocol.Message{Kind: protocol.KindError, Err: *e})
			return s.finish(out, EndBudget, e)
		case len(res.results) > 0 && res.stop != protocol.StopMaxTokens && res.stop != protocol.StopContextWindow:
			continue // tools ran: the model goes on, whatever its stop says
		}
		switch res.stop {
		case protocol.StopMaxTokens:
			e := &protocol.Error{Kind: protocol.ErrMaxTokens, Message: "response truncated (max_tokens reached)"}
			s.record(protocol.Message{Kind: protocol.KindError, Err: *e})
			return s.finish(out, EndMaxTokens, e)
		case protocol.StopContextWindow:
			if !s.maybeCompact(ctx, TriggerOverflow, out.Turns) {
				e := &protocol.Error{Kind: protocol.ErrMaxTokens, Message: "context window exceeded and compaction could not shrink it"}
				s.record(protocol.Message{Kind: protocol.KindError, Err: *e})
				return s.finish(out, EndMaxTokens, e)
			}
		case protocol.StopToolUse, protocol.StopPauseTurn:
			// The model wants to go on.
		case "":
			e := &protocol.Error{Kind: protocol.ErrStream, Message: "response ended without a stop reason"}
			return s.finish(out, EndProvider, e)
		case protocol.StopEndTurn, protocol.StopSequence, protocol.StopRefusal:
			return s.finish(out, EndCompleted, nil)
		default:
			// A provider's own word, carried as it came: the answer ended.
			return s.finish(out, EndCompleted, nil)
		}
	}
}

// finish fills the totals of out.
func (s *Session) finish(out Outcome, end End, err *protocol.Error) Outcome {
	out.End, out.Err = end, err
	u := s.stats.Usage()
	out.Usage = protocol.Usage{Input: u.Input - out.baseUsage.Input, Output: u.Output - out.baseUsage.Output,
		CacheRead: u.CacheRead - out.baseUsage.CacheRead, CacheCreation: u.CacheCreation - out.baseUsage.CacheCreation}
	out.CostUSD, out.CostKnown = s.stats.CostUSD-out.baseCost, !s.stats.CostUnknown
	s.stats.APIMillis += out.APITime.Milliseconds()
	if err := s.saveStats(); err != nil && out.End == EndCompleted {
		out.End, out.Err = EndSink, &protocol.Error{Kind: protocol.ErrInternal, Message: err.Error()}
	}
	return out
}

func cancelError(ctx context.Context) *protocol.Error {
	msg := "cancelled"
	if c := context.Cause(ctx); c != nil {
		msg = c.Error()
	}
	return &protocol.Error{Kind: protocol.ErrCancelled, Message: msg}
}

// addUserText appends a user message, merging it into a trailing user turn (which holds
// tool results when an earlier run stopped after its tools) so roles keep alternating.
// It reports whether it merged.
func (s *Session) addUserText(text string) bool {
	if n := len(s.conv); n > 0 && s.conv[n-1].Role == protocol.RoleUser {
		s.conv[n-1].Blocks = append(s.conv[n-1].Blocks, protocol.Block{Type: protocol.BlockText, Text: text})
		return true
	}
	s.conv = append(s.conv, protocol.UserText(text))
	return false
}

// overBudget reports whether the session spent its budget.
func (s *Session) overBudget() bool {
	b := s.cfg.Budget
	if b.MaxCostUSD > 0 && s.stats.CostUSD >= b.MaxCostUSD {
		return true
	}
	u := s.stats.Usage()
	return b.MaxTokens > 0 && u.Input+u.Output+u.CacheRead+u.CacheCreation >= b.MaxTokens
}

func (s *Session) budgetMessage() string {
	var parts []string
	if s.cfg.Budget.MaxCostUSD > 0 {
		parts = append(parts, fmt.Sprintf("spent $%.4f of $%.4f", s.stats.CostUSD, s.cfg.Budget.MaxCostUSD))
	}
	if s.cfg.Budget.MaxTokens > 0 {
		parts = append(parts, fmt.Sprintf("used %d of %d tokens", s.stats.Usage().Total(), s.cfg.Budget.MaxTokens))
	}
	return "budget exhausted: " + strings.Join(parts, ", ")
}

// account adds one model call's usage to the totals and its cost to what was spent,
// and returns the cost (ok false when unknown).
func (s *Session) account(model string, u protocol.Usage) (usd float64, ok bool) {
	s.stats.add(u)
	if s.deps.Cost == nil {
		s.stats.CostUnknown = true
		return 0, false
	}
	usd, ok = s.deps.Cost(model, u)
	if !ok {
		s.stats.CostUnknown = true
		return 0, false
	}
	s.stats.CostUSD += usd
	return usd, true
}

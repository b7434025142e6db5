package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/protocol"
)

// TaskToolName is the name of the sub-agent tool.
const TaskToolName = "Task"

// taskTool runs a sub-agent: an in-process child session with its own context, a share
// of the parent's budget and time, and its messages tagged with the Task call's id.
type taskTool struct {
	parent *Session
}

var _ tools.Tool = (*taskTool)(nil)

var taskSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"description":{"type":"string","description":"A short (3-7 word) label for the sub-task."},` +
	`"prompt":{"type":"string","description":"The complete, self-contained task for the sub-agent; it cannot see this conversation."}},` +
	`"required":["description","prompt"],"additionalProperties":false}`)

func (t *taskTool) Spec() protocol.ToolSpec {
	return protocol.ToolSpec{
		Name:        TaskToolName,
		Description: "Run a sub-agent on a self-contained sub-task. It has the same tools (nesting is limited), its own context window, and a share of your budget and time. Its final answer is returned as the result.",
		InputSchema: taskSchema,
	}
}

type taskInput struct {
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
}

// taggedSink marks every message of a sub-agent with the Task call that started it.
type taggedSink struct {
	next   Sink
	parent string
}

func (t taggedSink) Write(m protocol.Message) error {
	if m.Parent == "" {
		m.Parent = t.parent
	}
	return t.next.Write(m)
}

// Run runs the sub-agent of one Task call; its messages carry the call's id as Parent.
func (t *taskTool) Run(ctx context.Context, call tools.Call) tools.Result {
	callID := call.ID
	var in taskInput
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return tools.Result{Content: "invalid input: " + err.Error(), IsError: true}
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return tools.Result{Content: "no prompt provided for the sub-agent", IsError: true}
	}
	p := t.parent
	if slots := p.deps.SubAgentSlots; slots != nil {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ctx.Done():
			return tools.Result{Content: "not run: the session was cancelled while waiting for a sub-agent slot", IsError: true}
		}
	}
	share := p.cfg.SubAgents.Share
	cfg := p.cfg
	cfg.SessionID = "sub_" + p.deps.NewID()
	cfg.MaxTurns = p.cfg.SubAgents.MaxTurns
	cfg.Budget = Budget{}
	if b := p.cfg.Budget.MaxCostUSD; b > 0 {
		cfg.Budget.MaxCostUSD = max(b-p.stats.CostUSD, 0) * share
	}
	if b := p.cfg.Budget.MaxTokens; b > 0 {
		cfg.Budget.MaxTokens = int64(float64(max(b-p.stats.Usage().Total(), 0)) * share)
	}
	cctx := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, time.Duration(float64(time.Until(deadline))*share))
		defer cancel()
	}
	deps := p.deps
	deps.Store = nil
	deps.Sink = taggedSink{next: p.deps.Sink, parent: callID}
	child, err := newSession(cfg, deps, p.depth+1)
	if err != nil {
		return tools.Result{Content: "sub-agent not started: " + err.Error(), IsError: true}
	}
	child.parent = callID
	now := func() string { return p.deps.Now().UTC().Format(protocol.TimeFormat) }
	sub := protocol.SubAgent{SessionID: cfg.SessionID, Description: in.Description, Prompt: in.Prompt, Timestamp: now()}
	p.record(protocol.Message{Kind: protocol.KindSubAgentStart, Parent: callID, Sub: &sub})

	var span Span
	if p.deps.Observer != nil {
		cctx, span = p.deps.Observer.Start(cctx, Op{Kind: OpSubAgent, Name: p.cfg.JobID, SessionID: cfg.SessionID, Model: cfg.Model})
	}
	out := child.Run(cctx, in.Prompt)
	if span != nil {
		span.End(SpanEnd{Err: out.Err, Stop: out.StopReason, Usage: out.Usage, CostUSD: out.CostUSD, CostKnown: out.CostKnown, Turns: out.Turns})
	}

	status := "ok"
	if out.End != EndCompleted {
		status = "failed"
	}
	cs := child.Stats()
	p.stats.add(out.Usage)
	p.stats.CostUSD += cs.CostUSD
	p.stats.CostUnknown = p.stats.CostUnknown || cs.CostUnknown
	p.stats.Requests += cs.Requests
	p.stats.SubAgentRequests++
	thinking := lastThinking(child.conv)
	res := sub
	res.Status, res.Usage, res.Thinking, res.Text, res.Timestamp = status, out.Usage, thinking, out.FinalText, now()
	p.record(protocol.Message{Kind: protocol.KindUsage, Parent: callID, Usage: out.Usage, UsageKind: "sub_agent", SubSession: cfg.SessionID})
	p.record(protocol.Message{Kind: protocol.KindSubAgentResult, Parent: callID, Sub: &res})
	end := protocol.SubAgent{SessionID: cfg.SessionID, Status: status, Timestamp: now()}
	p.record(protocol.Message{Kind: protocol.KindSubAgentEnd, Parent: callID, Sub: &end})

	var b strings.Builder
	fmt.Fprintf(&b, "[sub-agent %s] %s (turns=%d, in=%d, out=%d)", cfg.SessionID, status, out.Turns, out.Usage.Input+out.Usage.CacheRead, out.Usage.Output)
	if out.Err != nil {
		fmt.Fprintf(&b, "\nError: %s: %s", out.Err.Kind, out.Err.Message)
	}
	if out.FinalText != "" {
		b.WriteString("\n")
		b.WriteString(out.FinalText)
	}
	return tools.Result{Content: b.String(), IsError: status != "ok"}
}

// lastThinking returns the thinking text of the last assistant turn.
func lastThinking(turns []protocol.Turn) string {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Role != protocol.RoleAssistant {
			continue
		}
		var b strings.Builder
		for _, bl := range turns[i].Blocks {
			if bl.Type == protocol.BlockThinking {
				b.WriteString(bl.Text)
			}
		}
		return b.String()
	}
	return ""
}

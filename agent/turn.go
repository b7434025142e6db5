package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/protocol"
)

// callResult is one model call: the assistant turn as it arrived and the results of the
// tools it called.
type callResult struct {
	blocks  []protocol.Block
	results []protocol.Block
	usage   protocol.Usage
	stop    protocol.StopReason
	err     *protocol.Error
	apiTime time.Duration
}

func (r *callResult) text() string {
	var b strings.Builder
	for _, bl := range r.blocks {
		if bl.Type == protocol.BlockText {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// request builds the next model request from the conversation.
func (s *Session) request() protocol.Request {
	system, tail := s.prompt.system(s.summary)
	return protocol.Request{
		Model:      s.cfg.Model,
		System:     system,
		SystemTail: tail,
		Messages:   s.conv,
		Tools:      s.specs,
		MaxTokens:  s.cfg.MaxTokens,
		Thinking:   s.cfg.Thinking,
		Limits:     s.cfg.Limits,
		Parent:     s.parent,
	}
}

// call makes one model call, running each tool as soon as its call is complete.
func (s *Session) call(ctx context.Context) callResult {
	req := s.request()
	var a assembler
	var res callResult
	var toolTime time.Duration
	start := s.deps.Now()
	sctx := ctx // the model call's own context; its tools are its siblings
	var span Span
	if s.deps.Observer != nil {
		sctx, span = s.deps.Observer.Start(ctx, Op{Kind: OpChat, SessionID: s.cfg.SessionID, Provider: s.cfg.Provider, Model: s.cfg.Model,
			Server: s.cfg.Server, Request: req})
	}
stream:
	for m := range s.deps.Provider.Stream(sctx, req) {
		switch m.Kind {
		case protocol.KindText:
			a.text(m.Text)
		case protocol.KindThinking:
			a.thinking(m)
		case protocol.KindToolCall:
			m.Call.Server = s.serverOf(m.Call.Name)
			if s.emit(m) != nil {
				break stream
			}
			t0 := s.deps.Now()
			tr := s.runTool(ctx, m.Call)
			toolTime += s.deps.Now().Sub(t0)
			a.toolUse(m.Call)
			res.results = append(res.results, protocol.Block{Type: protocol.BlockToolResult,
				ToolUseID: tr.ToolUseID, Content: tr.Content, IsError: tr.IsError})
			s.record(protocol.Message{Kind: protocol.KindToolResult, Result: tr})
			continue
		case protocol.KindUsage:
			res.usage = m.Usage
			m.UsageKind = "agent"
		case protocol.KindStop:
			res.stop = m.Stop
		case protocol.KindRetry:
			if span != nil {
				span.Retry(m, !a.empty() || len(res.results) > 0 || res.usage != (protocol.Usage{}), res.usage)
			}
			a = assembler{}
			res = callResult{}
		case protocol.KindError:
			e := m.Err
			res.err = &e
		default:
			// The session's own kinds: a provider never sends them; they pass through.
		}
		if s.emit(m) != nil {
			break stream
		}
	}
	res.blocks = a.finish()
	res.apiTime = s.deps.Now().Sub(start) - toolTime
	s.stats.Requests++
	var usd float64
	var priced bool
	if res.usage != (protocol.Usage{}) {
		usd, priced = s.account(s.cfg.Model, res.usage)
		if t := res.usage.Total(); t > 0 {
			s.stats.CurrentContext = t
		}
	}
	if span != nil {
		span.End(SpanEnd{Err: res.err, Stop: res.stop, Output: res.blocks, Usage: res.usage, CostUSD: usd, CostKnown: priced})
	}
	return res
}

// runTool runs one call and never panics: a failing or panicking tool becomes an
// error result the model can read.
func (s *Session) runTool(ctx context.Context, call protocol.ToolCall) (tr protocol.ToolResult) {
	tr = protocol.ToolResult{ToolUseID: call.ID, Name: call.Name, Server: s.serverOf(call.Name)}
	if s.deps.Observer != nil {
		var span Span
		ctx, span = s.deps.Observer.Start(ctx, Op{Kind: OpTool, SessionID: s.cfg.SessionID, Call: call})
		defer func() { span.End(SpanEnd{Tool: tr}) }() // after the recovery below
	}
	t, ok := s.tools[call.Name]
	if !ok {
		tr.Content, tr.IsError = fmt.Sprintf("unknown tool %q; available tools: %s", call.Name, strings.Join(s.specNames(), ", ")), true
		return tr
	}
	input := strings.TrimSpace(call.Input)
	if input == "" {
		input = "{}"
	}
	if !json.Valid([]byte(input)) || input[0] != '{' {
		tr.Content, tr.IsError = "invalid tool input: not a JSON object: "+tools.Truncate(call.Input, 500), true
		return tr
	}
	if err := ctx.Err(); err != nil {
		tr.Content, tr.IsError = "not run: the session was cancelled", true
		return tr
	}
	defer func() {
		if v := recover(); v != nil {
			tr.Content, tr.IsError = fmt.Sprintf("tool %s panicked: %v", call.Name, v), true
		}
	}()
	var r tools.Result
	if s.deps.Tools != nil && touchesMachine(call.Name) {
		r = s.deps.Tools.RunTool(ctx, call.Name, json.RawMessage(input))
	} else {
		r = t.Run(ctx, tools.Call{ID: call.ID, Input: json.RawMessage(input), Env: &s.env})
	}
	max := s.cfg.MaxOutput
	if max <= 0 {
		max = tools.DefaultMaxOutput
	}
	tr.Content, tr.IsError = tools.Truncate(r.Content, max), r.IsError
	return tr
}

// touchesMachine reports whether a built-in tool reads or changes the machine, so that
// its calls belong in the worker. TodoWrite and Task only touch the conversation.
func touchesMachine(name string) bool {
	switch name {
	case "Read", "Write", "Edit", "Bash", "Glob", "Grep":
		return true
	}
	return false
}

// assembler rebuilds the assistant turn from the stream, blocks in arrival order.
type assembler struct {
	blocks  []protocol.Block
	cur     strings.Builder
	curType protocol.BlockType
}

func (a *assembler) flush(signature string) {
	if a.curType != 0 {
		text := a.cur.String()
		if text != "" || signature != "" {
			a.blocks = append(a.blocks, protocol.Block{Type: a.curType, Text: text, Signature: signature})
		}
	}
	a.cur.Reset()
	a.curType = 0
}

func (a *assembler) text(t string) {
	if a.curType != protocol.BlockText {
		a.flush("")
		a.curType = protocol.BlockText
	}
	a.cur.WriteString(t)
}

func (a *assembler) thinking(m protocol.Message) {
	switch {
	case m.Redacted != "":
		a.flush("")
		a.blocks = append(a.blocks, protocol.Block{Type: protocol.BlockRedactedThinking, Data: m.Redacted})
	case m.Signature != "":
		if a.curType != protocol.BlockThinking {
			a.flush("")
			a.curType = protocol.BlockThinking
		}
		a.cur.WriteString(m.Text)
		a.flush(m.Signature)
	default:
		if a.curType != protocol.BlockThinking {
			a.flush("")
			a.curType = protocol.BlockThinking
		}
		a.cur.WriteString(m.Text)
	}
}

func (a *assembler) toolUse(c protocol.ToolCall) {
	a.flush("")
	input := json.RawMessage(strings.TrimSpace(c.Input))
	if len(input) == 0 || input[0] != '{' || !json.Valid(input) {
		input = json.RawMessage("{}")
	}
	a.blocks = append(a.blocks, protocol.Block{Type: protocol.BlockToolUse, ID: c.ID, Name: c.Name, Input: input})
}

// empty reports whether nothing has been assembled.
func (a *assembler) empty() bool { return len(a.blocks) == 0 && a.curType == 0 }

func (a *assembler) finish() []protocol.Block {
	a.flush("")
	return a.blocks
}

// persistCall appends the assistant turn and its tool results to the conversation.
// A failed or cut-off response is kept when tools already ran, so every tool_use keeps
// its tool_result and no side effect is forgotten; otherwise it is dropped.
func (s *Session) persistCall(res callResult) error {
	if len(res.blocks) == 0 {
		return nil
	}
	if (res.err != nil || res.stop == "") && len(res.results) == 0 {
		return nil
	}
	blocks := res.blocks
	if res.err != nil || res.stop == "" {
		// Keep the blocks up to the last tool use that ran; text after it is a fragment.
		last := -1
		for i, b := range blocks {
			if b.Type == protocol.BlockToolUse {
				last = i
			}
		}
		blocks = blocks[:last+1]
	}
	first := len(s.conv)
	s.conv = append(s.conv, protocol.Turn{Role: protocol.RoleAssistant, Blocks: blocks})
	if len(res.results) > 0 {
		results := append([]protocol.Block(nil), res.results...)
		order := map[string]int{}
		for i, b := range blocks {
			if b.Type == protocol.BlockToolUse {
				order[b.ID] = i
			}
		}
		sort.SliceStable(results, func(i, j int) bool { return order[results[i].ToolUseID] < order[results[j].ToolUseID] })
		s.conv = append(s.conv, protocol.Turn{Role: protocol.RoleUser, Blocks: results})
	}
	return s.persistAppend(first)
}

package sink

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentrun/agentrun/protocol"
)

// Claude writes the claude format: the stream-json of Claude Code
// (`claude -p --output-format stream-json --verbose`), one JSON line per Claude SDK
// message, each in one Write call and flushed, so that Claude Code consumers (the
// Claude Agent SDK's SDKMessage readers, claude-code-action) read an agentrun session:
//
//   - session_start is a system/init line (agentrun adds provider, job_id,
//     schema_version and sandbox);
//   - the text, thinking and tool calls of one model call become assistant lines, each
//     a complete Anthropic message: a line is written when a tool call is complete
//     (holding the blocks before it), and at the call's stop (holding the rest, the
//     call's usage and its stop_reason); every line of one call has the same message id;
//   - each tool_result is a user line with one tool_result block;
//   - a retry is system/api_retry, a compaction system/compact_boundary, a sandbox
//     violation or an error that is not the model API's a system/informational
//     warning; a model API error is a synthetic assistant line with "error", as Claude
//     Code writes it;
//   - a sub-agent is framed by system/task_started and system/task_notification, and
//     its own lines carry parent_tool_use_id, the Task call's id;
//   - result carries subtype (protocol.Status.Subtype), is_error, num_turns,
//     duration_ms, total_cost_usd (0 when unknown, with cost_known false), usage,
//     modelUsage, structured_output and, extra, agentrun's status and error.
//
// Every line has session_id and a uuid derived from the session id and the line's
// position, so replaying the same events writes the same lines. A partial call that a
// retry discards is never written. Claude is safe for concurrent use; it does not close
// its writer. Put it behind the Redactor like every other sink.
type Claude struct {
	mu      sync.Mutex
	w       io.Writer
	version string
	buf     bytes.Buffer
	enc     *json.Encoder
	closed  bool

	session string
	model   string
	lines   int64
	ncalls  int64
	context int64                  // the last known context size, for compactions
	calls   map[string]*claudeCall // the open model call of each agent, by parent id
}

// claudeCall is the part of one model call not yet written.
type claudeCall struct {
	id       string
	blocks   []claudeBlock
	text     strings.Builder
	thinking strings.Builder
	open     protocol.Kind // KindText or KindThinking while a block is being built
	usage    protocol.Usage
	written  bool
}

// NewClaude returns a sink writing the claude format to w; version is written as
// claude_code_version in system/init ("agentrun VERSION").
func NewClaude(w io.Writer, version string) *Claude {
	c := &Claude{w: w, version: "agentrun " + version, calls: map[string]*claudeCall{}}
	c.enc = json.NewEncoder(&c.buf)
	c.enc.SetEscapeHTML(false)
	return c
}

// Write writes the lines m completes, if any.
func (c *Claude) Write(m protocol.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.buf.Reset()
	if err := c.convert(m); err != nil {
		return fmt.Errorf("claude: %w", err)
	}
	if c.buf.Len() == 0 {
		return nil
	}
	err := writeLines(c.w, c.buf.Bytes(), "claude")
	if c.buf.Cap() > maxKeep {
		c.buf = bytes.Buffer{}
	}
	return err
}

// Close writes what an unfinished model call holds and flushes the writer. Later
// writes fail with ErrClosed.
func (c *Claude) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.buf.Reset()
	if err := c.flushAll(); err != nil {
		return fmt.Errorf("claude: %w", err)
	}
	if c.buf.Len() > 0 {
		return writeLines(c.w, c.buf.Bytes(), "claude")
	}
	if err := flush(c.w); err != nil {
		return fmt.Errorf("flush claude: %w", err)
	}
	return nil
}

// convert appends the lines of m to c.buf.
func (c *Claude) convert(m protocol.Message) error {
	switch m.Kind {
	case protocol.KindSessionStart:
		return c.init(m.Session)
	case protocol.KindText, protocol.KindThinking:
		c.delta(c.call(m.Parent), m)
	case protocol.KindToolCall:
		call := c.call(m.Parent)
		call.close()
		call.blocks = append(call.blocks, toolUseBlock{Type: "tool_use", ID: m.Call.ID, Name: m.Call.Name,
			Input: toolInput(m.Call.Input)})
		return c.assistant(m.Parent, call, nil)
	case protocol.KindToolResult:
		return c.line(&claudeUser{Type: "user", ParentToolUseID: parentOf(m.Parent),
			Message: claudeUserMessage{Role: "user", Content: []claudeBlock{toolResultBlock{Type: "tool_result",
				ToolUseID: m.Result.ToolUseID, Content: m.Result.Content, IsError: m.Result.IsError}}}})
	case protocol.KindUsage:
		if m.UsageKind == "" || m.UsageKind == "agent" {
			c.call(m.Parent).usage = m.Usage
			if m.Parent == "" && m.Usage.Total() > 0 {
				c.context = m.Usage.Total()
			}
		}
	case protocol.KindStop:
		call := c.call(m.Parent)
		call.close()
		delete(c.calls, m.Parent)
		if len(call.blocks) == 0 && call.written {
			return nil
		}
		reason := claudeStopReason(m.Stop)
		return c.assistant(m.Parent, call, &reason)
	case protocol.KindRetry:
		delete(c.calls, m.Parent) // the transport starts the call again
		kind, _, _ := strings.Cut(m.Reason, ":")
		status, word := apiError(protocol.ErrorKind(kind))
		return c.line(&claudeRetry{Type: "system", Subtype: "api_retry", Attempt: m.Attempt,
			RetryDelayMS: m.DelayMS, ErrorStatus: status, Error: word, Reason: m.Reason})
	case protocol.KindError:
		return c.error(m)
	case protocol.KindContextUpdate:
		trigger := "auto"
		if m.Context.Trigger == "manual" {
			trigger = "manual"
		}
		return c.line(&claudeCompact{Type: "system", Subtype: "compact_boundary", ParentToolUseID: optParent(m.Parent),
			CompactMetadata: claudeCompactMeta{Trigger: trigger, PreTokens: c.context}})
	case protocol.KindSandboxViolation:
		v := protocol.Violation{}
		if m.Violation != nil {
			v = *m.Violation
		}
		return c.line(&claudeInfo{Type: "system", Subtype: "informational", Level: "warning", Tag: "sandbox_violation",
			Content: "sandbox refused " + v.Kind + ": " + v.Target, ParentToolUseID: optParent(m.Parent),
			Violation: &claudeViolation{Kind: v.Kind, Target: v.Target}})
	case protocol.KindMCPStatus:
		if info, ok := mcpInfo(m); ok {
			return c.line(&info)
		}
	case protocol.KindSubAgentStart:
		s := subOf(m.Sub)
		return c.line(&claudeTaskStarted{Type: "system", Subtype: "task_started", TaskID: s.SessionID,
			ToolUseID: m.Parent, Description: s.Description, Prompt: s.Prompt})
	case protocol.KindSubAgentResult:
		s := subOf(m.Sub)
		status := "completed"
		if s.Status != "ok" {
			status = "failed"
		}
		return c.line(&claudeTaskNotification{Type: "system", Subtype: "task_notification", TaskID: s.SessionID,
			ToolUseID: m.Parent, Status: status, Summary: s.Text})
	case protocol.KindResult:
		if err := c.flushAll(); err != nil {
			return err
		}
		return c.result(m.Final)
	case protocol.KindSubAgentEnd:
		// Claude Code has no line for it: task_notification already told the outcome.
	}
	return nil
}

// call returns the open model call of the agent whose Task call is parent.
func (c *Claude) call(parent string) *claudeCall {
	call := c.calls[parent]
	if call == nil {
		c.ncalls++
		call = &claudeCall{id: "msg_" + c.hash("call", c.ncalls)[:24]}
		c.calls[parent] = call
	}
	return call
}

// delta adds a text or thinking delta to the block being built.
func (c *Claude) delta(call *claudeCall, m protocol.Message) {
	if call.open != m.Kind {
		call.close()
	}
	if m.Kind == protocol.KindText {
		call.open = m.Kind
		call.text.WriteString(m.Text)
		return
	}
	if m.Text != "" || m.Signature != "" {
		call.open = m.Kind
		call.thinking.WriteString(m.Text)
	}
	if m.Signature != "" {
		call.blocks = append(call.blocks, thinkingBlock{Type: "thinking", Thinking: call.thinking.String(), Signature: m.Signature})
		call.thinking.Reset()
		call.open = 0
	}
	if m.Redacted != "" {
		call.close()
		call.blocks = append(call.blocks, redactedThinkingBlock{Type: "redacted_thinking", Data: m.Redacted})
	}
}

// close ends the text or thinking block being built.
func (call *claudeCall) close() {
	switch call.open {
	case protocol.KindText:
		call.blocks = append(call.blocks, textBlock{Type: "text", Text: call.text.String()})
		call.text.Reset()
	case protocol.KindThinking:
		call.blocks = append(call.blocks, thinkingBlock{Type: "thinking", Thinking: call.thinking.String()})
		call.thinking.Reset()
	default:
		// No block is open.
	}
	call.open = 0
}

// assistant writes the blocks call holds as one assistant line; stop is set on the
// call's last line, which also carries its usage.
func (c *Claude) assistant(parent string, call *claudeCall, stop *string) error {
	msg := claudeMessage{ID: call.id, Type: "message", Role: "assistant", Model: c.model,
		Content: call.blocks, StopReason: stop}
	if msg.Content == nil {
		msg.Content = []claudeBlock{}
	}
	if stop != nil {
		msg.Usage = usageOf(call.usage)
	}
	call.blocks, call.written = nil, true
	return c.line(&claudeAssistant{Type: "assistant", Message: msg, ParentToolUseID: parentOf(parent)})
}

// flushAll writes what unfinished calls hold, the top level's last.
func (c *Claude) flushAll() error {
	for parent, call := range c.calls {
		if parent == "" {
			continue
		}
		if err := c.flushCall(parent, call); err != nil {
			return err
		}
	}
	if call := c.calls[""]; call != nil {
		return c.flushCall("", call)
	}
	return nil
}

func (c *Claude) flushCall(parent string, call *claudeCall) error {
	delete(c.calls, parent)
	call.close()
	if len(call.blocks) == 0 {
		return nil
	}
	return c.assistant(parent, call, nil)
}

// error writes m: a model API error as Claude Code does, a synthetic assistant message
// whose text is the error and whose "error" names it; any other as a warning.
func (c *Claude) error(m protocol.Message) error {
	if isAPIKind(m.Err.Kind) {
		_, word := apiError(m.Err.Kind)
		if call := c.calls[m.Parent]; call != nil {
			if err := c.flushCall(m.Parent, call); err != nil {
				return err
			}
		}
		c.ncalls++
		stop := string(protocol.StopSequence)
		msg := claudeMessage{ID: "msg_" + c.hash("call", c.ncalls)[:24], Type: "message", Role: "assistant", Model: "<synthetic>",
			Content: []claudeBlock{textBlock{Type: "text", Text: "API Error: " + m.Err.Message}}, StopReason: &stop}
		return c.line(&claudeAssistant{Type: "assistant", Message: msg, ParentToolUseID: parentOf(m.Parent), Error: word})
	}
	return c.line(&claudeInfo{Type: "system", Subtype: "informational", Level: "warning", Tag: "error",
		Content: string(m.Err.Kind) + ": " + m.Err.Message, ErrorKind: m.Err.Kind, ParentToolUseID: optParent(m.Parent)})
}

// claudeLine is one line of the stream, which line stamps with the session's id (but
// init and result, which carry their own) and a fresh uuid.
type claudeLine interface{ stamp(session, uuid string) }

// line encodes v, with session_id and uuid set, as one line in c.buf.
func (c *Claude) line(v claudeLine) error {
	c.lines++
	v.stamp(c.session, c.uuid())
	return c.enc.Encode(v)
}

// hash is a stable hex digest of the session id, a word and a number.
func (c *Claude) hash(what string, n int64) string {
	h := sha1.Sum([]byte(c.session + "\x00" + what + "\x00" + strconv.FormatInt(n, 10)))
	return hex.EncodeToString(h[:])
}

// uuid is the line's id: a name-based (version 5 layout) UUID of the session id and
// the line's number.
func (c *Claude) uuid() string {
	h := sha1.Sum([]byte(c.session + "\x00line\x00" + strconv.FormatInt(c.lines, 10)))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:16])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// toolInput is a tool call's input as a JSON value: the model's JSON, {} when it sent
// nothing, or its text as a string when that is not JSON.
func toolInput(in string) any {
	t := strings.TrimSpace(in)
	if t == "" {
		return json.RawMessage("{}")
	}
	if utf8.ValidString(t) && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	return in
}

func parentOf(p string) *string {
	if p == "" {
		return nil
	}
	return &p
}

// optParent is parentOf for the lines where Claude Code has no parent member.
func optParent(p string) *string { return parentOf(p) }

func subOf(s *protocol.SubAgent) protocol.SubAgent {
	if s == nil {
		return protocol.SubAgent{}
	}
	return *s
}

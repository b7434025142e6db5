package scripted

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/agentrun/agentrun/protocol"
	"go.yaml.in/yaml/v3"
)

// Script is a list of model responses, one Step per request of a session.
//
// Which step answers a request is read from the request itself, so the model keeps no
// conversation state: tool calls of step s get the ids "tc_<s>_<i>", and a request is
// at step 1 + the largest such step among its tool_use and tool_result ids (0 when
// there is none), plus one for every assistant turn after the last turn holding that
// id, so that steps without tool calls advance too. This survives compaction as long
// as the latest tool round is kept. Requests past the last step get FinishedText.
//
// A sub-agent's requests name the Task call that started it (protocol.Request.Parent,
// over HTTP the protocol.ParentHeader). The sub-agent plays that call's Steps, or, when
// the call has none, the steps of the agent that made the call, from the start; its
// tool calls get the ids "<parent>.<s>_<i>", so that ids are unique across a session
// and all its sub-agents at every depth.
//
// Every format carries text, thinking, tool calls, usage and the stop reasons
// end_turn, tool_use, max_tokens and refusal alike. Only the Anthropic format carries
// thinking signatures and the other stop reasons (stop_sequence and pause_turn read
// back as end_turn from the OpenAI formats, model_context_window_exceeded as
// max_tokens), and Chat carries no cache_creation count that decoders read.
type Script struct {
	// Name identifies the script in errors (the file name for LoadScript).
	Name  string
	Steps []Step
}

// Step is one model response.
type Step struct {
	// Thinking, when set, opens the response as one thinking block.
	Thinking string
	// Text, when set, follows as one text block.
	Text string
	// ToolCalls come last, in order. The call at index i of step s gets the id
	// "tc_<s>_<i>" (in a sub-agent "<parent>.<s>_<i>").
	ToolCalls []ToolCall
	// Stop is the stop reason: tool_use when ToolCalls is not empty, else end_turn
	// unless the script says otherwise.
	Stop protocol.StopReason
	// Usage overrides the estimated token counts; nil means all estimated.
	Usage *Usage
	// Fault, when set, makes the first Fault.Times attempts of this step fail.
	Fault *Fault
}

// ToolCall is one tool call of a Step.
type ToolCall struct {
	Name string
	// Input is the call's input as compact JSON, an object, with the script's key order.
	Input string
	// Steps, only on a call of the Task tool (SubAgentTool), are the steps of the
	// sub-agent it starts. nil means the sub-agent plays the steps of the agent that
	// made the call, from the start; an empty list means it has nothing to say.
	Steps []Step
}

// SubAgentTool is the name of the tool whose calls start sub-agents (agent.TaskToolName).
const SubAgentTool = "Task"

// Usage is a step's token counts. A nil Input or Output is estimated from the bytes
// of the request or the response; the cache counts default to 0.
type Usage struct {
	Input, Output            *int64
	CacheRead, CacheCreation int64
}

// FaultKind says how an attempt fails.
type FaultKind uint8

// The fault kinds.
const (
	// FaultStatus answers with an HTTP error status before any byte of the stream.
	FaultStatus FaultKind = iota + 1
	// FaultCut drops the connection after about half of the response.
	FaultCut
	// FaultStall streams about half of the response, then goes silent until the
	// client leaves.
	FaultStall
	// FaultMalformed sends a data line of broken JSON after about half of the response.
	FaultMalformed
	// FaultEOF ends the body cleanly after about half of the response, without the
	// format's terminal event.
	FaultEOF
	// FaultErrorEvent sends the format's mid-stream error event after about half of
	// the response.
	FaultErrorEvent
	// FaultPanic panics inside the in-process Stream; over HTTP the handler aborts the
	// connection before writing anything.
	FaultPanic
)

var faultNames = [...]string{
	FaultStatus:     "status",
	FaultCut:        "cut",
	FaultStall:      "stall",
	FaultMalformed:  "malformed",
	FaultEOF:        "eof",
	FaultErrorEvent: "error_event",
	FaultPanic:      "panic",
}

// String returns the script key of k, such as "error_event".
func (k FaultKind) String() string {
	if k == 0 || int(k) >= len(faultNames) {
		return fmt.Sprintf("FaultKind(%d)", uint8(k))
	}
	return faultNames[k]
}

// Fault makes attempts of one step fail. Attempts are counted per session and step.
type Fault struct {
	Kind FaultKind
	// Times is how many attempts fail before one succeeds (at least 1).
	Times int
	// Status is the HTTP status of FaultStatus (400 to 599).
	Status int
	// RetryAfter and RetryAfterPrecise, when positive, are sent as the retry-after (in
	// whole seconds) and retry-after-ms (in milliseconds) headers of FaultStatus.
	RetryAfter, RetryAfterPrecise time.Duration
	// Body replaces the format's default error body of FaultStatus.
	Body string
	// Header holds extra response headers of FaultStatus, such as x-should-retry.
	Header map[string]string
	// ErrorType is the provider error type of FaultErrorEvent, such as
	// "overloaded_error".
	ErrorType string
	// Message is the panic value of FaultPanic.
	Message string
}

// ScriptError is a problem in a script, with its position.
type ScriptError struct {
	// Name is the script's name; Line and Column are 1-based, 0 when unknown.
	Name         string
	Line, Column int
	// Field is the path of the offending field, such as "steps[2].fault.status".
	Field string
	Msg   string
}

// Error returns "name:line:column: field: message", leaving out what is unknown.
func (e *ScriptError) Error() string {
	pos := e.Name
	if e.Line > 0 {
		pos += fmt.Sprintf(":%d", e.Line)
		if e.Column > 0 {
			pos += fmt.Sprintf(":%d", e.Column)
		}
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", pos, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s", pos, e.Msg)
}

// LoadScript reads and parses the script file at path.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	return ParseScript(path, data)
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// ParseScript parses a script written in YAML or JSON. name names it in errors, which
// are *ScriptError values carrying the line, column and field of the problem.
func ParseScript(name string, data []byte) (*Script, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		e := &ScriptError{Name: name, Msg: err.Error()}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
		}
		return nil, e
	}
	p := &parser{name: name, budget: maxInputNodes}
	if len(doc.Content) == 0 {
		return nil, &ScriptError{Name: name, Msg: "empty script: want a mapping with steps"}
	}
	s, err := p.script(doc.Content[0])
	if err != nil {
		return nil, err
	}
	s.Name = name
	return s, nil
}

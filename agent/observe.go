package agent

import (
	"context"

	"github.com/agentrun/agentrun/protocol"
)

// Observer watches work as it happens, for traces and metrics: the agent reports each
// model call, tool call, compaction and sub-agent as an operation that starts and ends,
// and the runner reports the run, its sessions and their checks the same way. The
// implementation (package telemetry) lives outside the agent; Deps.Observer nil
// observes nothing, at the cost of a nil check.
type Observer interface {
	// Start begins op. The returned context carries it: operations started with that
	// context are its children, and so are the model request and the tool process it
	// reaches. Span is never nil.
	Start(ctx context.Context, op Op) (context.Context, Span)
}

// OpKind says what an Op is.
type OpKind uint8

// The operations. The agent starts OpChat, OpTool, OpCompact and OpSubAgent; the
// runner OpRun, OpSession and OpCheck.
const (
	// OpRun is one run of a job spec.
	OpRun OpKind = iota + 1
	// OpSession is one attempt of a session: the agent invoked on its job.
	OpSession
	// OpChat is one model call, the summary request of a compaction included.
	OpChat
	// OpTool is one tool call.
	OpTool
	// OpCompact is one compaction of the conversation window.
	OpCompact
	// OpSubAgent is the sub-agent of one Task call.
	OpSubAgent
	// OpCheck is one of a job's checks, run after its session.
	OpCheck
)

// Op describes an operation as it starts. Which fields are set depends on Kind.
type Op struct {
	Kind OpKind
	// Name is the job id (OpSession, OpSubAgent), the check's name (OpCheck) or the
	// spec file (OpRun).
	Name string
	// SessionID is the session at work (the sub-agent's own for OpSubAgent); Key is the
	// session's key (OpSession).
	SessionID, Key string
	// Attempt numbers the attempts of a session from 1 (OpSession).
	Attempt int
	// Provider and Model are what the session talks to, and Server is the provider's
	// host and port, empty for an in-process model (OpChat; OpSession says what the spec
	// asked for, its result what it got).
	Provider, Model, Server string
	// Secrets are values no exported attribute may hold (OpRun, OpSession).
	Secrets []string
	// Sessions counts the sessions the run starts (OpRun).
	Sessions int
	// Request is the request of a model call (OpChat).
	Request protocol.Request
	// Call is the call of OpTool.
	Call protocol.ToolCall
	// Trigger and Reason say why a compaction runs (OpCompact): TriggerAuto,
	// TriggerOverflow or TriggerForced, and Decision.Reason. Turns is the size of the
	// window and Keep how many of its turns stay.
	Trigger, Reason string
	Turns, Keep     int
}

// Span is an operation in progress. Its methods are called by the goroutine that
// started it.
type Span interface {
	// Retry reports that the operation's model call is being retried (m is the
	// KindRetry): what the abandoned attempt produced is void. voided says whether it
	// had produced anything, and usage is what it reported using.
	Retry(m protocol.Message, voided bool, usage protocol.Usage)
	// End closes the operation.
	End(e SpanEnd)
}

// SpanEnd is how an operation ended. Which fields are set depends on its kind.
type SpanEnd struct {
	// Err is the failure; nil when the operation succeeded.
	Err *protocol.Error
	// Stop is a model call's stop reason and Output the assistant turn it produced
	// (OpChat).
	Stop   protocol.StopReason
	Output []protocol.Block
	// Usage and CostUSD are what the operation used (OpChat, OpSubAgent, OpRun); the
	// cost is known when CostKnown is set.
	Usage     protocol.Usage
	CostUSD   float64
	CostKnown bool
	// Turns counts a sub-agent's model calls (OpSubAgent).
	Turns int
	// Tool is the outcome of OpTool.
	Tool protocol.ToolResult
	// Result is the session's result (OpSession); Check the check's (OpCheck).
	Result *protocol.Result
	Check  *protocol.Check
	// Results are the results of the sessions the run started (OpRun).
	Results []*protocol.Result
}

package runner

import (
	"context"
	"errors"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/worker"
)

// Cancel causes: why a session's context ended, which decides its status.
var (
	// ErrSessionTimeout is the cancel cause of a session past its wall-clock limit.
	ErrSessionTimeout = errors.New("session timeout reached")
	errInactivity     = errors.New("no provider byte and no tool output within the idle timeout")
	errRunBudget      = errors.New("run budget exhausted")
)

// statusOf maps how the agent ended, and why its context ended, to a session status.
func statusOf(ctx context.Context, out agent.Outcome) (protocol.Status, *protocol.Error) {
	switch out.End {
	case agent.EndCompleted:
		return protocol.StatusSuccess, nil
	case agent.EndMaxTurns:
		return protocol.StatusMaxTurns, out.Err
	case agent.EndMaxTokens:
		return protocol.StatusMaxTokens, out.Err
	case agent.EndBudget:
		return protocol.StatusBudget, out.Err
	case agent.EndProvider:
		if ctx.Err() != nil {
			return cancelStatus(ctx)
		}
		switch kind(out.Err) {
		case protocol.ErrAuth:
			return protocol.StatusAuth, out.Err
		case protocol.ErrRequest:
			return protocol.StatusRequest, out.Err
		case protocol.ErrInactivity:
			return protocol.StatusInactivity, out.Err
		default:
			// Overload, rate limits, server and network trouble that outlived the
			// retries, and whatever else the provider failed with.
			return protocol.StatusProvider, out.Err
		}
	case agent.EndCancelled:
		return cancelStatus(ctx)
	default:
		if errors.Is(context.Cause(ctx), errDiskFull) {
			// The session failed on the full disk that stopped the run: a write
			// of its artifacts, or a tool's.
			return cancelStatus(ctx)
		}
		e := out.Err
		if e == nil {
			e = &protocol.Error{Kind: protocol.ErrInternal, Message: "session ended: " + out.End.String()}
		}
		return protocol.StatusCrashed, e
	}
}

// cancelStatus says why ctx ended.
func cancelStatus(ctx context.Context) (protocol.Status, *protocol.Error) {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, ErrSessionTimeout):
		return protocol.StatusTimeout, &protocol.Error{Kind: protocol.ErrTimeout, Message: cause.Error()}
	case errors.Is(cause, errInactivity):
		return protocol.StatusInactivity, &protocol.Error{Kind: protocol.ErrInactivity, Message: cause.Error()}
	case errors.Is(cause, errRunBudget):
		return protocol.StatusBudget, &protocol.Error{Kind: protocol.ErrBudget, Message: cause.Error()}
	case errors.Is(cause, worker.ErrSetup):
		return protocol.StatusSandbox, &protocol.Error{Kind: protocol.ErrSandbox, Message: cause.Error()}
	}
	msg := "cancelled"
	if cause != nil {
		msg = cause.Error()
	}
	return protocol.StatusCancelled, &protocol.Error{Kind: protocol.ErrCancelled, Message: msg}
}

func kind(e *protocol.Error) protocol.ErrorKind {
	if e == nil {
		return ""
	}
	return e.Kind
}

// retryable reports whether a failed session may succeed if run again.
func retryable(status protocol.Status, e *protocol.Error) bool {
	switch status {
	case protocol.StatusInactivity:
		return true
	case protocol.StatusProvider:
		return e == nil || e.Retryable()
	default:
		return false
	}
}

// ResultOf turns an agent outcome into the fields of a result that the agent knows:
// status, error, stop reason, turns, API time, usage, cost and final text. ctx is the
// session's context, whose cancel cause decides the status of a cancelled session.
func ResultOf(ctx context.Context, out agent.Outcome) protocol.Result {
	var res protocol.Result
	res.Status, res.Error = statusOf(ctx, out)
	res.StopReason = out.StopReason
	// num_turns counts the model turns that completed: a session that failed before
	// any reports 0. The cost is a number, 0 when nothing was spent, unless some usage
	// was of a model with no price.
	res.NumTurns = out.CompletedTurns
	res.DurationAPIMS = out.APITime.Milliseconds()
	res.Usage = out.Usage
	if out.CostKnown {
		cost := out.CostUSD
		res.TotalCostUSD = &cost
	}
	res.Result = out.FinalText
	if res.Result == "" && res.Error != nil {
		res.Result = res.Error.Message
	}
	res.Checks = []protocol.Check{}
	return res
}

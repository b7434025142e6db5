// Package tools holds the agent's built-in tools; every tool runs inside one workspace
// directory, and asks the bash_mode safety policy (package policy) before it acts.
package tools

import (
	"context"
	"encoding/json"
	"os/exec"
	"time"

	"github.com/agentrun/agentrun/policy"
	"github.com/agentrun/agentrun/protocol"
)

// Tool is one tool the model can call.
type Tool interface {
	// Spec describes the tool to the model: name, description, JSON input schema.
	Spec() protocol.ToolSpec
	// Run executes one call. Failures are results with IsError set, never panics or
	// Go errors: the model reads them and can recover.
	Run(ctx context.Context, call Call) Result
}

// Call is one call of a tool: what the model sent, and what the call may touch.
type Call struct {
	// ID is the tool-use id the model gave the call (the Task tool tags its sub-agent's
	// messages with it); empty when a tool is run without a model, as the worker does.
	ID string
	// Input is the call's input, a JSON object.
	Input json.RawMessage
	// Env is what the call may touch; nil for tools that touch nothing.
	Env *Env
}

// Result is the outcome of one tool call.
type Result struct {
	// Content is what the model receives, and what the tool_result event carries.
	Content string
	// IsError marks a failed call.
	IsError bool
}

// Env is what a tool call may touch.
type Env struct {
	// Workspace is the absolute directory (symlinks resolved) that relative paths
	// resolve against and that the policy calls "workspace".
	Workspace string
	// Home is the user's home directory, for "~" in paths and the policy.
	Home string
	// Policy decides which commands and paths are allowed.
	Policy policy.Policy
	// Timeout is the time limit of a Bash call (0 means DefaultTimeout, 10 minutes).
	// A call's own timeout argument can shorten it, never extend it.
	Timeout time.Duration
	// ProcEnv is the environment of Bash processes (nil means a minimal environment).
	ProcEnv []string
	// MaxOutput caps the bytes of one result (0 means DefaultMaxOutput).
	MaxOutput int
	// Activity, when set, is called whenever a tool makes visible progress (command
	// output), at most every 200 ms per call. It may be called from the goroutines
	// that read a command's output, so it must be safe for concurrent use.
	Activity func()
	// Groups, when set, hears of the process group of every command from its start until
	// it has been killed.
	Groups Groups
	// KeepBackground lets what a command started in the background outlive the call
	// (a server started with & answers in the next call). Only a supervisor that ends
	// them with the session may set it: the sandboxed worker does.
	KeepBackground bool
	// Procs, when set, starts and waits for every process a tool runs, in place of
	// exec.Cmd's Start and Wait: a worker that reaps the orphans it adopts must know
	// which of its children are waited for elsewhere.
	Procs Procs

	realWS string // the Workspace with symbolic links resolved, once looked up
}

// Groups hears of the process groups commands run in, so that a supervisor outside
// agentrun can kill the groups still listed should agentrun itself be killed: then no
// tool can end them, and what they started would run on. Both methods must be safe for
// concurrent use.
type Groups interface {
	Started(pgid int)
	Ended(pgid int)
}

// Procs starts and waits for a tool's processes. Start must leave cmd started as
// cmd.Start does, and Wait must return what cmd.Wait returns; both must be safe for
// concurrent use.
type Procs interface {
	Start(cmd *exec.Cmd) error
	Wait(cmd *exec.Cmd) error
}

// StartProc starts cmd through e.Procs, or with cmd.Start when there is none.
func (e *Env) StartProc(cmd *exec.Cmd) error {
	if e == nil || e.Procs == nil {
		return cmd.Start()
	}
	return e.Procs.Start(cmd)
}

// WaitProc waits for cmd, which StartProc started, through e.Procs or with cmd.Wait.
func (e *Env) WaitProc(cmd *exec.Cmd) error {
	if e == nil || e.Procs == nil {
		return cmd.Wait()
	}
	return e.Procs.Wait(cmd)
}

// DefaultMaxOutput is the default cap on one tool result, in bytes.
const DefaultMaxOutput = 100_000

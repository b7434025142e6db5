// Package agent runs one agent session: it sends the conversation to a model, runs the
// tools the model calls, feeds their results back, compacts the context when it grows,
// and reports every message to a sink; it knows providers only through Provider.
package agent

import (
	"context"
	"encoding/json"
	"iter"
	"time"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/protocol"
)

// Provider streams one model response. The sequence ends with one KindStop, or with one
// KindError when the call failed; a KindRetry means everything received since the
// previous retry (or the start) belongs to an abandoned attempt.
type Provider interface {
	Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message]
}

// ToolRunner runs the calls of the built-in tools that touch the machine (Read, Write,
// Edit, Bash, Glob, Grep) somewhere else than the agent's own process: the runner's
// sandboxed worker. It must not panic; failures are error results.
type ToolRunner interface {
	RunTool(ctx context.Context, name string, input json.RawMessage) tools.Result
}

// ServerTools are tools that servers outside agentrun serve (MCP servers), offered
// after the built-in ones, sub-agents' included. Call must not panic; failures are
// error results.
type ServerTools interface {
	// Specs are the tools to offer; their names are unique.
	Specs() []protocol.ToolSpec
	// Server names the server of an offered tool.
	Server(tool string) string
	Call(ctx context.Context, tool string, input json.RawMessage) tools.Result
}

// Sink receives every message of the session, in order.
type Sink interface {
	Write(m protocol.Message) error
}

// Config describes one session. Zero values take the defaults in brackets.
type Config struct {
	SessionID string
	JobID     string
	// Provenance names the provider and model for session_start and the requests, and
	// the run's view of the session (matrix, repeat, attempt, version) for session_start.
	protocol.Provenance
	// Server is the provider's host and port, for the Observer; empty for an
	// in-process model.
	Server string
	// MaxTurns bounds the model calls of one Run [50].
	MaxTurns int
	// MaxTokens is the output limit of one model call [16384].
	MaxTokens int
	Thinking  protocol.Thinking
	// System is the job's own system text, appended after the built-in layers.
	System string
	// Tools are the names of the tools offered to the model [all built-in tools].
	Tools []string
	// Workspace is the directory the tools work in; Home the user's home.
	Workspace string
	Home      string
	// BashMode is the safety policy ["0467"]; an invalid mode denies every command.
	BashMode string
	// ToolTimeout is the default limit of one Bash call [10m].
	ToolTimeout time.Duration
	// ProcEnv is the environment of tool processes (API keys must not be in it).
	ProcEnv []string
	// MaxOutput caps one tool result in bytes [100000].
	MaxOutput int
	// InstructionHome is the directory of global instruction files and skills
	// ($AGENTRUN_HOME); empty means none.
	InstructionHome string
	// Skills are loaded whole into the system prompt; a missing one is an error.
	Skills []string
	// Budget stops the session once spent.
	Budget Budget
	// Limits bound one model response in bytes [protocol's defaults]; past one, the
	// session ends with EndMaxTokens and an error of Kind protocol.ErrTooLarge.
	Limits protocol.Limits
	// Compaction tunes context compaction.
	Compaction CompactConfig
	// SubAgents bounds Task.
	SubAgents SubAgentConfig
	// Sandbox is the confinement the tools run under, for session_start.
	Sandbox *protocol.Sandbox
	// MCPServers are the MCP servers as connecting left them, for session_start.
	MCPServers []protocol.MCPServer
}

// Budget limits what a session may spend. Zero fields are unlimited.
type Budget struct {
	MaxCostUSD float64
	MaxTokens  int64
}

// SubAgentConfig bounds the Task tool.
type SubAgentConfig struct {
	// MaxDepth is how deep sub-agents may nest [2]; at the limit Task is not offered.
	MaxDepth int
	// MaxTurns caps one sub-agent's model calls [20].
	MaxTurns int
	// Share is the fraction of the parent's remaining budget and time a sub-agent
	// may use [0.5].
	Share float64
}

// Deps are the session's collaborators.
type Deps struct {
	Provider Provider
	Sink     Sink
	// Store persists the conversation; nil keeps it in memory only.
	Store Store
	// Now is the clock [time.Now]; NewID makes session ids for sub-agents.
	Now   func() time.Time
	NewID func() string
	// Cost prices a model call's usage in USD; nil or ok=false means unknown.
	Cost func(model string, u protocol.Usage) (usd float64, ok bool)
	// Activity is called whenever the session makes progress (tool output).
	Activity func()
	// Groups, when set, hears of the process group of every command the session's tools
	// run, sub-agents' included.
	Groups tools.Groups
	// Tools, when set, runs every call of a tool that touches the machine, sub-agents'
	// included; nil runs them in this process (library use and the agent's own tests).
	Tools ToolRunner
	// SubAgentSlots bounds how many sub-agents run at once across every session that
	// shares it; nil means no bound beyond one per session.
	SubAgentSlots chan struct{}
	// Observer, when set, watches every model call, tool call, compaction and
	// sub-agent, sub-agents' included.
	Observer Observer
	// Servers, when set, are the session's MCP tools.
	Servers ServerTools
}

func (c *Config) defaults() {
	if c.MaxTurns <= 0 {
		c.MaxTurns = 50
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = 16384
	}
	if c.BashMode == "" {
		c.BashMode = "0467"
	}
	if c.ToolTimeout <= 0 {
		c.ToolTimeout = 10 * time.Minute
	}
	if c.SubAgents.MaxDepth <= 0 {
		c.SubAgents.MaxDepth = 2
	}
	if c.SubAgents.MaxTurns <= 0 {
		c.SubAgents.MaxTurns = 20
	}
	if c.SubAgents.Share <= 0 || c.SubAgents.Share > 1 {
		c.SubAgents.Share = 0.5
	}
	c.Compaction.defaults()
}

func (d *Deps) defaults() {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Activity == nil {
		d.Activity = func() {}
	}
	if d.NewID == nil {
		d.NewID = func() string { return NewSessionID(d.Now()) }
	}
}

// Package mcpclient connects a session to its MCP tool servers with the official Go
// SDK: stdio servers run in the session's worker (its sandbox), streamable-HTTP
// servers are reached from the runner. Each server is connected at session start
// within its startup timeout, its tools are offered as mcp__<server>__<tool>, every
// call is bounded by its call timeout, and what went wrong is said in mcp_status
// events: a headless session never waits on a server, and never hides one that failed.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/worker"
)

// Config is one server to connect, with its ${VAR} values read.
type Config struct {
	Name string
	// Command, Args and Env describe a stdio server; URL and Headers an http one.
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Required servers must connect for the session to start.
	Required bool
	// StartupTimeout bounds starting, initializing and listing tools; CallTimeout one
	// tool call.
	StartupTimeout, CallTimeout time.Duration
	// Offers filters the server's tools by name; nil offers every tool.
	Offers func(tool string) bool
}

// Transport is "stdio" or "http".
func (c Config) Transport() string {
	if c.URL != "" {
		return "http"
	}
	return "stdio"
}

// Starter starts a stdio server in the session's sandbox: the worker client.
type Starter interface {
	StartMCP(ctx context.Context, cmd worker.MCPCommand, activity func()) (*worker.MCPConn, error)
}

// Options are a Set's collaborators.
type Options struct {
	// Starter runs stdio servers; nil fails them.
	Starter Starter
	// Activity, when set, hears of every byte a stdio server writes.
	Activity func()
	// HTTP reaches the http servers [a client of its own per server].
	HTTP *http.Client
	// Version names agentrun to the servers.
	Version string
}

// Set is the MCP servers of one session. Its methods are safe for concurrent use.
type Set struct {
	opts    Options
	servers []*server
	tools   map[string]toolRef // by the name offered to the model
	specs   []protocol.ToolSpec

	mu      sync.Mutex
	emit    func(protocol.Message) // nil until Attach
	pending []protocol.Message
	closed  bool
}

// toolRef is one offered tool: its server and its own name there.
type toolRef struct {
	srv  *server
	name string
}

// Connect connects every server at once, each within its startup timeout, and lists
// their tools. It never fails: a server that does not connect has its status and
// reason in Statuses, and no tools. ctx bounds it all (the session's context).
func Connect(ctx context.Context, configs []Config, opts Options) *Set {
	s := &Set{opts: opts, tools: map[string]toolRef{}}
	for _, c := range configs {
		s.servers = append(s.servers, newServer(s, c))
	}
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Go(func() { srv.connect(ctx) })
	}
	wg.Wait()
	taken := map[string]bool{}
	for _, srv := range s.servers {
		for _, t := range srv.listed {
			name := toolName(srv.cfg.Name, t.Name, taken)
			taken[name] = true
			s.tools[name] = toolRef{srv: srv, name: t.Name}
			s.specs = append(s.specs, protocol.ToolSpec{Name: name, Description: t.Description, InputSchema: t.schema})
		}
		srv.state.ToolCount = len(srv.listed)
	}
	return s
}

// Specs are the tools to offer the model, server by server.
func (s *Set) Specs() []protocol.ToolSpec {
	if s == nil {
		return nil
	}
	return append([]protocol.ToolSpec(nil), s.specs...)
}

// Server names the server of an offered tool, "" for another name.
func (s *Set) Server(tool string) string {
	if s == nil {
		return ""
	}
	if t, ok := s.tools[tool]; ok {
		return t.srv.cfg.Name
	}
	return ""
}

// Statuses is the state of every server, in the order of the configs.
func (s *Set) Statuses() []protocol.MCPServer {
	if s == nil || len(s.servers) == 0 {
		return nil
	}
	out := make([]protocol.MCPServer, len(s.servers))
	for i, srv := range s.servers {
		out[i] = srv.status()
	}
	return out
}

// RequiredDown returns the first required server that did not connect.
func (s *Set) RequiredDown() (protocol.MCPServer, bool) {
	for _, st := range s.Statuses() {
		if st.Required && !st.Up() {
			return st, true
		}
	}
	return protocol.MCPServer{}, false
}

// Attach starts writing the Set's events to emit, which must be safe for concurrent
// use: an mcp_status event per server (and, for one that did not connect, an error
// event saying what it costs), then whatever happened since Connect. Call it once the
// session's stream is open, after session_start.
func (s *Set) Attach(emit func(protocol.Message)) {
	if s == nil {
		return
	}
	var first []protocol.Message
	for _, st := range s.Statuses() {
		first = append(first, protocol.Message{Kind: protocol.KindMCPStatus, MCP: &st})
		if st.Up() {
			continue
		}
		msg := fmt.Sprintf("optional MCP server %s is %s: %s; its tools are absent", st.Name, st.Status, st.Reason)
		if st.Required {
			msg = fmt.Sprintf("required MCP server %s is %s: %s", st.Name, st.Status, st.Reason)
		}
		first = append(first, protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrMCP, Message: msg}})
	}
	s.mu.Lock()
	pending := append(first, s.pending...)
	s.pending = nil
	s.emit = emit
	s.mu.Unlock()
	for _, m := range pending {
		emit(m)
	}
}

// event writes m, or keeps it until Attach.
func (s *Set) event(m protocol.Message) {
	s.mu.Lock()
	emit := s.emit
	if emit == nil {
		s.pending = append(s.pending, m)
	}
	s.mu.Unlock()
	if emit != nil {
		emit(m)
	}
}

// Call runs one call of an offered tool. It never panics and never blocks past the
// server's call timeout: a timeout, a crash or a protocol error is an error result.
func (s *Set) Call(ctx context.Context, tool string, input json.RawMessage) tools.Result {
	t, ok := s.tools[tool]
	if !ok {
		return tools.Result{Content: fmt.Sprintf("unknown MCP tool %q", tool), IsError: true}
	}
	return t.srv.call(ctx, t.name, input)
}

// Close ends every server at once, each in bounded time (a stdio server's stdin
// closes, then SIGTERM and SIGKILL go to its group), and waits for all they started.
func (s *Set) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(s.servers))
	for i, srv := range s.servers {
		wg.Go(func() { errs[i] = srv.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// isClosed reports whether Close has begun: a server that goes away then did not crash.
func (s *Set) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// toolName is the name a server's tool is offered as: mcp__<server>__<tool>, with
// every character that a provider does not take in a tool name replaced by '_', at
// most 64 bytes; a name taken already (or cut) gets a short hash of the tool's name.
func toolName(server, tool string, taken map[string]bool) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
				return r
			}
			return '_'
		}, s)
	}
	name := "mcp__" + clean(server) + "__" + clean(tool)
	if len(name) <= maxToolName && !taken[name] {
		return name
	}
	suffix := "_" + shortHash(tool)
	if len(name) > maxToolName-len(suffix) {
		name = name[:maxToolName-len(suffix)]
	}
	return name + suffix
}

// maxToolName is the longest tool name every provider accepts.
const maxToolName = 64

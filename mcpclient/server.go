package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/worker"
)

// server is one MCP server of a Set.
type server struct {
	set    *Set
	cfg    Config
	listed []listedTool // its offered tools, as the first connection listed them
	http   *httpClient  // nil for a stdio server

	restartMu sync.Mutex // one recovery at a time
	mu        sync.Mutex
	state     protocol.MCPServer
	cur       *link // the live connection; nil when down
	closing   bool
	wg        sync.WaitGroup // the watchers of its links
}

// listedTool is a tool as the server listed it.
type listedTool struct {
	Name, Description string
	schema            json.RawMessage
}

// link is one connection to the server.
type link struct {
	sess     *mcp.ClientSession
	conn     *worker.MCPConn // the process of a stdio server
	done     chan struct{}   // closed when the connection has ended
	reason   string          // why it ended, set before done closes
	reported bool            // its end was reported (guarded by server.mu)
}

func newServer(s *Set, c Config) *server {
	srv := &server{set: s, cfg: c, state: protocol.MCPServer{Name: c.Name, Transport: c.Transport(), Required: c.Required}}
	if c.URL != "" {
		srv.http = newHTTPClient(c.Headers)
	}
	return srv
}

func (srv *server) status() protocol.MCPServer {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.state
}

// connect makes the first connection and lists the tools, within the startup timeout.
func (srv *server) connect(ctx context.Context) {
	l, status, reason := srv.open(ctx, true)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if l == nil {
		srv.state.Status, srv.state.Reason = status, reason
		return
	}
	srv.cur = l
	srv.state.Status = protocol.MCPConnected
}

// open starts (stdio) and initializes a connection, and lists the tools when list is
// set, all within the startup timeout. It returns the live link, or the status and the
// reason of the failure.
func (srv *server) open(ctx context.Context, list bool) (*link, string, string) {
	sctx, cancel := context.WithTimeout(ctx, srv.cfg.StartupTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "agentrun", Version: srv.set.opts.Version}, &mcp.ClientOptions{
		Capabilities:         &mcp.ClientCapabilities{},
		ElicitationHandler:   srv.declineElicitation,
		CreateMessageHandler: srv.declineSampling, //nolint:staticcheck // SA1019: servers may still ask for sampling in the deprecation window; agentrun declines it
	})
	var t mcp.Transport
	var st *stdioTransport
	if srv.http != nil {
		t = srv.http.transport(srv.cfg.URL)
	} else {
		st = &stdioTransport{starter: srv.set.opts.Starter, activity: srv.set.opts.Activity, cmd: worker.MCPCommand{
			Command: srv.cfg.Command, Args: srv.cfg.Args, Env: envList(srv.cfg.Env)}}
		t = st
	}
	phase := "initializing"
	sess, err := client.Connect(sctx, t, nil)
	if err == nil && list {
		phase = "listing its tools"
		var listed []listedTool
		for tool, lerr := range sess.Tools(sctx, nil) {
			if lerr != nil {
				err = lerr
				break
			}
			if srv.cfg.Offers == nil || srv.cfg.Offers(tool.Name) {
				listed = append(listed, listedTool{Name: tool.Name, Description: describe(tool), schema: inputSchema(tool)})
			}
		}
		srv.listed = listed
		if err != nil {
			_ = sess.Close()
		}
	}
	if err != nil {
		if st != nil && st.conn == nil {
			phase = "starting"
		}
		status, reason := srv.classify(ctx, sctx, err, phase, st)
		if st != nil && st.conn != nil {
			_ = st.conn.Close()
		}
		return nil, status, reason
	}
	l := &link{sess: sess, done: make(chan struct{})}
	if st != nil {
		l.conn = st.conn
	}
	srv.wg.Go(func() { srv.watch(l) })
	return l, "", ""
}

// classify says why a connection failed: the server asked for authorization
// (needs_auth), did not answer in time (timeout), or failed.
func (srv *server) classify(ctx, sctx context.Context, err error, phase string, st *stdioTransport) (string, string) {
	switch {
	case srv.http != nil && srv.http.unauthorized() != 0:
		return protocol.MCPNeedsAuth, fmt.Sprintf("the server answered HTTP %d while %s: it asks for authorization, and agentrun has no "+
			"interactive OAuth; give it a static token, such as headers: {Authorization: \"Bearer ${TOKEN}\"}", srv.http.unauthorized(), phase)
	case ctx.Err() != nil:
		return protocol.MCPFailed, fmt.Sprintf("the session ended while %s: %v", phase, context.Cause(ctx))
	case errors.Is(sctx.Err(), context.DeadlineExceeded):
		return protocol.MCPTimeout, fmt.Sprintf("no answer within %s (startup_timeout) while %s", srv.cfg.StartupTimeout, phase)
	case notJSON(err):
		return protocol.MCPFailed, fmt.Sprintf("the server wrote what is not JSON-RPC while %s (a log line on stdout?): %v", phase, err)
	case st != nil && st.conn != nil && exited(st.conn):
		return protocol.MCPFailed, fmt.Sprintf("the server exited while %s: %s", phase, st.conn.ExitReason())
	}
	return protocol.MCPFailed, fmt.Sprintf("%s: %v", phase, err)
}

// notJSON reports whether err says that the server's output did not decode.
func notJSON(err error) bool {
	var syn *json.SyntaxError
	return errors.As(err, &syn) || strings.Contains(err.Error(), "invalid character")
}

// exited reports whether c's server exits, waiting a little for it: a failed call or
// handshake whose server is going away.
func exited(c *worker.MCPConn) bool {
	select {
	case <-c.Exited():
		return true
	case <-time.After(exitWait):
		return false
	}
}

// exitWait is how long a failed call waits to see whether the server went away, which
// tells a crash from an error the server answered.
const exitWait = 2 * time.Second

// watch waits for the end of l's connection and reports it as a crash, unless the
// Set is closing or the server was already replaced.
func (srv *server) watch(l *link) {
	err := l.sess.Wait()
	reason := "the connection ended"
	if err != nil {
		reason += ": " + err.Error()
	}
	if l.conn != nil {
		switch r := l.conn.ExitReason(); {
		case err != nil && notJSON(err):
			reason = "the server wrote what is not JSON-RPC (" + err.Error() + ")"
		case r != "":
			reason = "the server exited: " + r
		default:
			reason = "the connection ended (the server closed its output)"
		}
	}
	l.reason = reason
	close(l.done)
	if l.conn != nil {
		_ = l.conn.Close() // a server whose connection broke may still run
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.cur == l && !srv.closing && !srv.set.isClosed() {
		srv.reportCrash(l)
	}
}

// reportCrash records and announces the end of l. srv.mu is held.
func (srv *server) reportCrash(l *link) {
	if l.reported {
		return
	}
	l.reported = true
	srv.state.Status, srv.state.Reason = protocol.MCPCrashed, l.reason
	srv.set.event(srv.statusEvent())
}

func (srv *server) statusEvent() protocol.Message {
	st := srv.state
	st.ToolCount = len(srv.listed)
	return protocol.Message{Kind: protocol.KindMCPStatus, MCP: &st}
}

// recover replaces l, whose connection ended, with a new connection, once per
// session. It reports whether a live connection is there afterwards.
func (srv *server) recover(ctx context.Context, l *link) bool {
	srv.restartMu.Lock()
	defer srv.restartMu.Unlock()
	srv.mu.Lock()
	if srv.cur != l {
		up := srv.cur != nil
		srv.mu.Unlock()
		return up // another call recovered it already, or it is down for good
	}
	srv.reportCrash(l)
	srv.cur = nil
	if srv.state.Restarts >= 1 || srv.closing {
		srv.mu.Unlock()
		return false
	}
	srv.state.Restarts++
	srv.mu.Unlock()
	nl, status, reason := srv.open(ctx, false)
	srv.mu.Lock()
	if nl == nil {
		srv.state.Status, srv.state.Reason = status, "restart failed: "+reason
		srv.set.event(srv.statusEvent())
		srv.mu.Unlock()
		return false
	}
	if srv.closing {
		srv.mu.Unlock()
		_ = nl.sess.Close() // the session ended meanwhile
		return false
	}
	srv.cur = nl
	srv.state.Status, srv.state.Reason = protocol.MCPRestarted, "restarted after "+l.reason
	srv.set.event(srv.statusEvent())
	srv.mu.Unlock()
	return true
}

// live returns the connection to call on, restarting a server that crashed since its
// last call, or nil and why the server is down.
func (srv *server) live(ctx context.Context) (*link, string) {
	srv.mu.Lock()
	l := srv.cur
	srv.mu.Unlock()
	if l == nil {
		return nil, srv.downReason()
	}
	select {
	case <-l.done:
		if !srv.recover(ctx, l) {
			return nil, srv.downReason()
		}
		srv.mu.Lock()
		l = srv.cur
		srv.mu.Unlock()
		if l == nil {
			return nil, srv.downReason()
		}
	default:
	}
	return l, ""
}

func (srv *server) downReason() string {
	st := srv.status()
	msg := st.Status + ": " + st.Reason
	if st.Restarts > 0 {
		msg += " (it was restarted once already; a server is restarted once per session)"
	}
	return msg
}

// call runs one call of the server's tool name, within the call timeout.
func (srv *server) call(ctx context.Context, name string, input json.RawMessage) tools.Result {
	l, down := srv.live(ctx)
	if l == nil {
		return tools.Result{Content: fmt.Sprintf("MCP server %s is down (%s); its tools cannot run", srv.cfg.Name, down), IsError: true}
	}
	cctx, cancel := context.WithTimeout(ctx, srv.cfg.CallTimeout)
	res, err := l.sess.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: input})
	timedOut := errors.Is(cctx.Err(), context.DeadlineExceeded)
	cancel()
	if err == nil {
		return tools.Result{Content: render(res), IsError: res.IsError}
	}
	var rpc *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return tools.Result{Content: fmt.Sprintf("MCP tool %s did not finish: %v", name, context.Cause(ctx)), IsError: true}
	case timedOut:
		return tools.Result{Content: fmt.Sprintf("MCP tool %s of server %s timed out after %s (call_timeout); the server is still running",
			name, srv.cfg.Name, srv.cfg.CallTimeout), IsError: true}
	case errors.As(err, &rpc):
		return tools.Result{Content: fmt.Sprintf("MCP server %s answered %s with error %d: %s", srv.cfg.Name, name, rpc.Code, rpc.Message), IsError: true}
	}
	// A broken connection is a crash: wait, bounded, until it has ended (and the
	// server is stopped); any other failure is one only if the connection ends soon.
	wait := exitWait
	if notJSON(err) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, worker.ErrMCPExited) {
		wait = worker.MCPStopTimeout
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-l.done:
	case <-t.C:
		return tools.Result{Content: fmt.Sprintf("MCP tool %s of server %s failed: %v", name, srv.cfg.Name, err), IsError: true}
	}
	msg := fmt.Sprintf("MCP server %s crashed during the call of %s (%s)", srv.cfg.Name, name, l.reason)
	if srv.recover(context.WithoutCancel(ctx), l) {
		msg += "; it has been restarted (once per session): call the tool again if that is safe"
	} else {
		msg += "; it is down for the rest of the session: " + srv.downReason()
	}
	return tools.Result{Content: msg, IsError: true}
}

// close ends the server's connection, bounded, and waits for its watchers.
func (srv *server) close() error {
	srv.mu.Lock()
	srv.closing = true
	l := srv.cur
	if l != nil {
		select {
		case <-l.done:
			srv.reportCrash(l) // it ended unseen: the result says so
		default:
		}
	}
	srv.mu.Unlock()
	var err error
	if l != nil {
		if cerr := l.sess.Close(); cerr != nil && !errors.Is(cerr, mcp.ErrConnectionClosed) {
			err = fmt.Errorf("close MCP server %s: %w", srv.cfg.Name, cerr)
		}
	}
	srv.wg.Wait()
	if srv.http != nil {
		srv.http.close()
	}
	return err
}

// declineElicitation answers a server's request for user input: a headless session
// has no user, so it declines, and says so in an error event.
func (srv *server) declineElicitation(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	msg := ""
	if req != nil && req.Params != nil {
		msg = req.Params.Message
	}
	srv.set.event(protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrMCPDeclined,
		Message: fmt.Sprintf("MCP server %s asked for user input (elicitation %q); declined: agentrun runs headless", srv.cfg.Name,
			tools.Truncate(msg, 200))}})
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// declineSampling answers a server's request for a model completion with an error,
// and says so in an error event.
func (srv *server) declineSampling(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SA1019: servers may still ask for sampling in the deprecation window
	srv.set.event(protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrMCPDeclined,
		Message: fmt.Sprintf("MCP server %s asked for a model completion (sampling); declined: agentrun runs headless", srv.cfg.Name)}})
	return nil, &jsonrpc.Error{Code: -1, Message: "sampling declined: agentrun runs headless sessions, with no user to approve a request"}
}

// stdioTransport is an mcp.Transport that starts the server in the session's worker
// and speaks newline-delimited JSON-RPC over the worker's relay of its stdin and stdout.
type stdioTransport struct {
	starter  Starter
	activity func()
	cmd      worker.MCPCommand
	conn     *worker.MCPConn // set by Connect
}

// Connect implements mcp.Transport.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if t.starter == nil {
		return nil, errors.New("no sandbox to run a stdio server in")
	}
	conn, err := t.starter.StartMCP(ctx, t.cmd, t.activity)
	if err != nil {
		return nil, err
	}
	t.conn = conn
	return (&mcp.IOTransport{Reader: conn, Writer: conn, MaxLineLength: maxLine}).Connect(ctx)
}

// maxLine bounds one JSON-RPC message from a stdio server.
const maxLine = 32 << 20

package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// The runner's side of stdio MCP servers: a server runs in the session's worker, and
// its stdin and stdout travel over the worker's pipe in frames. An MCPConn is the
// server's two byte streams, for an MCP client's newline-delimited JSON transport.

// ErrMCPExited is what reading or writing an MCPConn returns once its server has
// exited, wrapped with how it ended.
var ErrMCPExited = errors.New("MCP server exited")

// mcpMaxBuffered bounds the stdout bytes of one server waiting to be read; past it the
// server is stopped.
const mcpMaxBuffered = 64 << 20

// MCPStopTimeout bounds MCPConn.Close: the worker's grace after stdin closes, after
// SIGTERM and for SIGKILL to take effect, and a margin.
const MCPStopTimeout = mcpStdinGrace + mcpTermGrace + 4*time.Second

// StartMCP starts a stdio MCP server in the session's worker (starting the worker
// first when needed) and returns its connection. activity, when set, is called
// whenever the server writes. The server runs until its connection is closed, it
// exits, or the worker ends.
func (c *Client) StartMCP(ctx context.Context, cmd MCPCommand, activity func()) (*MCPConn, error) {
	spec := encodeJSON(cmd)
	reply, p, err := c.requestOn(ctx, func(id string) []string { return []string{frameMCPStart, id, spec} })
	if err != nil {
		return nil, err
	}
	if len(reply) != 4 || reply[0] != frameMCPStarted {
		return nil, fmt.Errorf("worker: unexpected reply %q", first(reply))
	}
	if reply[3] != "" {
		return nil, errors.New(reply[3])
	}
	conn, err := p.mcp.take(reply[1])
	if err != nil {
		return nil, err
	}
	conn.setActivity(activity)
	return conn, nil
}

// mcpConns are the MCP connections of one worker process, by server id. A server's
// connection stays until it has been handed over and the server has exited, so that
// one which exits at once still reaches its caller, with how it ended.
type mcpConns struct {
	mu     sync.Mutex
	m      map[string]*MCPConn
	failed error
}

// dispatch hands an MCP frame to its connection and reports whether f was one. It
// registers the connection of a server that started before the next frame is read, so
// that none of its output is missed.
func (cs *mcpConns) dispatch(p *process, f []string) bool {
	switch {
	case len(f) == 4 && f[0] == frameMCPStarted:
		if f[3] == "" {
			cs.mu.Lock()
			if cs.m == nil {
				cs.m = map[string]*MCPConn{}
			}
			cs.m[f[1]] = &MCPConn{p: p, id: f[1], pid: atoi(f[2]), wake: make(chan struct{}, 1), exited: make(chan struct{})}
			cs.mu.Unlock()
		}
		return false // the reply of its request
	case len(f) == 3 && f[0] == frameMCPOut:
		if c := cs.get(f[1]); c != nil {
			c.deliver(f[2])
		}
	case len(f) == 4 && f[0] == frameMCPExit:
		cs.mu.Lock()
		if c := cs.m[f[1]]; c != nil {
			if c.taken {
				delete(cs.m, f[1])
			}
			c.exit(f[2], f[3]) // under cs.mu, so that take sees it exited or not yet
		}
		cs.mu.Unlock()
	default:
		return false
	}
	return true
}

func (cs *mcpConns) get(id string) *MCPConn {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.m[id]
}

// take hands the connection of a server that started to its caller, also when the
// server has exited since; it is then forgotten here.
func (cs *mcpConns) take(id string) (*MCPConn, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[id]
	if c == nil {
		if cs.failed != nil {
			return nil, fmt.Errorf("worker: MCP server lost with its worker: %w", cs.failed)
		}
		return nil, errors.New("worker: MCP server lost before it was handed over")
	}
	c.taken = true
	select {
	case <-c.exited:
		delete(cs.m, id)
	default:
	}
	return c, nil
}

// fail ends every connection: the worker is gone, and its servers with it.
func (cs *mcpConns) fail(err error) {
	cs.mu.Lock()
	conns := cs.m
	cs.m, cs.failed = nil, err
	cs.mu.Unlock()
	for _, c := range conns {
		c.exit("the worker ended: "+err.Error(), "")
	}
}

// MCPConn is one stdio MCP server running in the worker: Read returns what it writes
// to its stdout, Write sends to its stdin. Reads and writes may run concurrently with
// each other and with Close.
type MCPConn struct {
	p     *process
	id    string
	pid   int
	taken bool // handed to StartMCP's caller; guarded by mcpConns.mu

	mu       sync.Mutex
	activity func() // called whenever the server writes, once handed over
	buf      []byte
	wake     chan struct{} // cap 1: buf grew, or the server exited
	exited   chan struct{}
	reason   string // how it ended, with the end of its stderr
	closed   bool   // Close was called: reads end
	stopSent bool
}

// PID is the server's pid in the worker's pid namespace.
func (c *MCPConn) PID() int { return c.pid }

// Exited is closed once the server has exited.
func (c *MCPConn) Exited() <-chan struct{} { return c.exited }

// ExitReason says how the server ended ("exit status 1: <stderr>"), "" while it runs.
func (c *MCPConn) ExitReason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reason
}

func (c *MCPConn) deliver(data string) {
	c.mu.Lock()
	over := len(c.buf)+len(data) > mcpMaxBuffered
	if !over {
		c.buf = append(c.buf, data...)
	}
	activity := c.activity
	c.mu.Unlock()
	if over {
		c.stop()
		return
	}
	if activity != nil {
		activity()
	}
	c.signal()
}

// setActivity sets the function called whenever the server writes.
func (c *MCPConn) setActivity(f func()) {
	c.mu.Lock()
	c.activity = f
	c.mu.Unlock()
}

func (c *MCPConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *MCPConn) exit(how, stderr string) {
	c.mu.Lock()
	select {
	case <-c.exited:
		c.mu.Unlock()
		return
	default:
	}
	c.reason = how
	if stderr != "" {
		c.reason += ": " + stderr
	}
	close(c.exited)
	c.mu.Unlock()
	c.signal()
}

// Read reads the server's stdout. After the server exited and its output is read, it
// returns ErrMCPExited; after Close, io.EOF.
func (c *MCPConn) Read(b []byte) (int, error) {
	for {
		c.mu.Lock()
		if len(c.buf) > 0 {
			n := copy(b, c.buf)
			c.buf = c.buf[n:]
			if len(c.buf) == 0 {
				c.buf = nil
			}
			c.mu.Unlock()
			return n, nil
		}
		closed, reason := c.closed, c.reason
		c.mu.Unlock()
		if closed {
			return 0, io.EOF
		}
		select {
		case <-c.exited:
			c.mu.Lock()
			empty := len(c.buf) == 0
			c.mu.Unlock()
			if empty {
				if reason == "" {
					reason = c.ExitReason()
				}
				return 0, fmt.Errorf("%w: %s", ErrMCPExited, reason)
			}
		case <-c.wake:
		}
	}
}

// Write sends b to the server's stdin.
func (c *MCPConn) Write(b []byte) (int, error) {
	select {
	case <-c.exited:
		return 0, fmt.Errorf("%w: %s", ErrMCPExited, c.ExitReason())
	default:
	}
	if err := c.p.write(frameMCPIn, c.id, string(b)); err != nil {
		return 0, fmt.Errorf("MCP server: %w", c.p.exitError(err))
	}
	return len(b), nil
}

// stop asks the worker to end the server (once).
func (c *MCPConn) stop() {
	c.mu.Lock()
	sent := c.stopSent
	c.stopSent = true
	c.mu.Unlock()
	if !sent {
		_ = c.p.write(frameMCPClose, c.id)
	}
}

// Close stops the server, as the MCP specification asks of a stdio client: its stdin
// closes, then SIGTERM and SIGKILL go to its process group, each after a grace period.
// It returns once the server has exited, or after MCPStopTimeout.
func (c *MCPConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.signal()
	c.stop()
	t := time.NewTimer(MCPStopTimeout)
	defer t.Stop()
	select {
	case <-c.exited:
		return nil
	case <-t.C:
		return fmt.Errorf("MCP server (pid %d) did not exit within %s", c.pid, MCPStopTimeout)
	}
}

// String names the server for messages.
func (c *MCPConn) String() string { return "MCP server " + c.id + " (pid " + strconv.Itoa(c.pid) + ")" }

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/sandbox"
)

// Client is the runner's side of one session's worker. The worker starts at the first
// request and is started again after it has exited idle. Requests are serialised. The
// zero Client is not usable: call New.
type Client struct {
	cfg      Config
	binary   string
	activity func()

	// spawner, when set, starts the workers of level strict.
	spawner *Spawner

	// requestEnv, when set, gives the variables added to the environment of the
	// processes of one request, from its context.
	requestEnv func(context.Context) []string

	// proxy, when set, serves the network proxy on the loopback listener of each
	// worker at level strict with network.
	proxy func(net.Listener)
	// refused, when set, hears of the connect(2) calls refused at level landlock.
	refused func(string)
	// setupFailed, when set, hears why a worker could not set its sandbox up.
	setupFailed func(error)

	mu      sync.Mutex // one request at a time; guards proc, ready, seq
	proc    *process
	ready   *Ready
	seq     int
	starts  int
	lastPID int
}

// New returns a client that runs the worker as binary (agentrun-worker or the agentrun
// executable, both of which dispatch Command to Main). activity, when set, hears of tool progress.
func New(cfg Config, binary string, activity func()) *Client {
	if activity == nil {
		activity = func() {}
	}
	if cfg.Spec.External == nil {
		cfg.Spec.External = sandbox.ExternalDirs()
	}
	cfg.Spec = cfg.Spec.WithLinkTargets()
	if abs, err := filepath.Abs(binary); err == nil {
		binary = abs // the worker starts in /
	}
	if cfg.Build == "" {
		cfg.Build = ownBuild()
	}
	return &Client{cfg: cfg, binary: binary, activity: activity}
}

// SetSpawner makes the workers of level strict start through s, and the workers of
// every level take their turns to start from it: the clients of one run share one.
func (c *Client) SetSpawner(s *Spawner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spawner = s
}

// SetIdleExit changes how long the next worker waits idle before it exits.
func (c *Client) SetIdleExit(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfg.IdleExit = d
}

// SetProxy makes serve take, at each start of a worker at level strict whose spec has
// network (Spec.Proxied), the listener the worker made on the sandbox's loopback: the
// network proxy serves the tools' connections there, from outside the sandbox. serve
// must not block; the client closes the listener when that worker ends. Call it
// before the first request.
func (c *Client) SetProxy(serve func(net.Listener)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.proxy = serve
}

// SetRefusedConnect makes refused hear of each connect(2) of a tool at level landlock
// that the runner refused: host:port, or the address family. It is called from a
// goroutine of the worker's, concurrently. Call it before the first request.
func (c *Client) SetRefusedConnect(refused func(target string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refused = refused
}

// SetRequestEnv makes f give, for each request, the variables added to the environment
// of the processes it starts, from the request's context: the trace context of the
// span it runs in (TRACEPARENT). Call it before the first request.
func (c *Client) SetRequestEnv(f func(context.Context) []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requestEnv = f
}

// envOf is the env field of a request made with ctx.
func (c *Client) envOf(ctx context.Context) string {
	if c.requestEnv == nil {
		return ""
	}
	return encodeEnv(c.requestEnv(ctx))
}

// Ready returns what the last worker reported once confined, or nil before the first
// start.
func (c *Client) Ready() *Ready {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready == nil {
		return nil
	}
	r := *c.ready
	return &r
}

// PID returns the host pid of the worker process last started (its first stage), 0
// before the first start.
func (c *Client) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return c.lastPID
	}
	return c.proc.child.pid()
}

// Starts reports how many times a worker process was started.
func (c *Client) Starts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.starts
}

// RunTool runs one built-in tool call in the worker.
func (c *Client) RunTool(ctx context.Context, name string, input json.RawMessage) tools.Result {
	env := c.envOf(ctx)
	reply, err := c.request(ctx, func(id string) []string { return []string{frameCall, id, name, string(input), env} })
	if err != nil {
		return tools.Result{Content: err.Error(), IsError: true}
	}
	if len(reply) != 4 || reply[0] != frameResult {
		return tools.Result{Content: fmt.Sprintf("worker: unexpected reply %q", first(reply)), IsError: true}
	}
	return tools.Result{Content: reply[2], IsError: reply[3] == "1"}
}

// Exec runs a command (a check) in the worker, outside the tools' policy but inside
// the sandbox.
func (c *Client) Exec(ctx context.Context, command string, timeout time.Duration, maxOutput int) ExecResult {
	env := c.envOf(ctx)
	reply, err := c.request(ctx, func(id string) []string {
		return []string{frameExec, id, command, strconv.FormatInt(timeout.Milliseconds(), 10), strconv.Itoa(maxOutput), env}
	})
	if err != nil {
		return ExecResult{ExitCode: -1, Err: err}
	}
	if len(reply) != 6 || reply[0] != frameExecDone {
		return ExecResult{ExitCode: -1, Err: fmt.Errorf("worker: unexpected reply %q", first(reply))}
	}
	r := ExecResult{Output: reply[2], ExitCode: atoi(reply[3]), TimedOut: reply[4] == "1"}
	if reply[5] != "" {
		r.Err = errors.New(reply[5])
	}
	return r
}

// request sends one request, starting the worker if needed, and returns its reply.
func (c *Client) request(ctx context.Context, build func(id string) []string) ([]string, error) {
	reply, _, err := c.requestOn(ctx, build)
	return reply, err
}

// requestOn is request, also returning the worker process that answered.
func (c *Client) requestOn(ctx context.Context, build func(id string) []string) ([]string, *process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	id := strconv.Itoa(c.seq)
	for try := 0; ; try++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("not run: %w", context.Cause(ctx))
		}
		if c.proc == nil {
			p, ready, err := c.startReporting(ctx)
			c.starts++
			if err != nil {
				return nil, nil, err
			}
			c.proc, c.ready, c.lastPID = p, &ready, p.child.pid()
		}
		p := c.proc
		kills := p.oomKills()
		reply, bye, err := p.roundTrip(ctx, id, build(id), c.activity)
		if note := p.memoryNote(kills); note != "" {
			switch {
			case err != nil: // the worker itself, at the limit while a tool started
				err = fmt.Errorf("%w %s", err, strings.TrimSpace(note))
			case len(reply) > 2:
				reply[2] += note // a tool's content or a command's output, in either reply
			}
		}
		if bye || err != nil || ctx.Err() != nil {
			_ = c.proc.close() // the request's own error, or the worker's bye, is what is reported
			c.proc = nil
		}
		if bye && try == 0 {
			continue // the worker had exited idle before it read the request
		}
		if err != nil {
			return nil, nil, err
		}
		if bye {
			return nil, nil, errors.New("worker: exited idle twice in a row")
		}
		return reply, p, nil
	}
}

// startEvery is how often a worker being started counts as activity: its start is
// agentrun's own work, never a silent tool, whatever a loaded machine makes it cost.
const startEvery = 250 * time.Millisecond

// startReporting starts a worker, calling the activity callback while it starts.
func (c *Client) startReporting(ctx context.Context) (*process, Ready, error) {
	c.activity()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(startEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				c.activity()
			}
		}
	})
	p, ready, err := start(ctx, c.cfg, c.binary, c.spawner, c.proxy, c.refused)
	close(done)
	wg.Wait()
	c.activity()
	if errors.Is(err, ErrSetup) && c.setupFailed != nil {
		c.setupFailed(err)
	}
	return p, ready, err
}

// ErrSetup is wrapped by the error of a worker that could not set its sandbox up: a
// layer the kernel refused, so no tool can run in it.
var ErrSetup = errors.New("could not be set up")

// SetSetupFailed makes failed hear, at each start of a worker that could not set its
// sandbox up, why (an error wrapping ErrSetup). Call it before the first request.
func (c *Client) SetSetupFailed(failed func(error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setupFailed = failed
}

// Close ends the worker, and with it every process of the session.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return nil
	}
	err := c.proc.close()
	c.proc = nil
	return err
}

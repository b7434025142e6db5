package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/protocol"
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

// SetSpawner makes the workers of level strict start through s.
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
		reply, bye, err := p.roundTrip(ctx, id, build(id), c.activity)
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

// process is one running worker.
type process struct {
	child  child
	req    *os.File
	rep    *os.File
	dec    *protocol.FrameDecoder
	stderr *tailBuffer
	pids   *sandbox.Pids // nil when no pids hierarchy is writable
	// proxyL is the listener on the sandbox's loopback the worker handed over (level
	// strict with network), closed with the process.
	proxyL net.Listener
	// stopConnects ends the answering of the tools' connect(2) calls (level landlock
	// with network) once the worker has ended.
	stopConnects func()
	wmu          sync.Mutex // the request pipe: requests, cancels and MCP servers' input
	buf          []byte

	// Once the worker is ready, one reader takes every reply: a request's go to
	// frames, an MCP server's to its connection.
	frames   chan []string
	stopped  chan struct{} // closed by close: nobody waits for frames any more
	readDone chan struct{} // closed when the reader has ended
	readErr  error         // why the reader ended, set before readDone closes
	mcp      mcpConns
	closeMu  sync.Mutex
	closed   bool
	closeErr error
}

// startTimeout bounds the wait for a worker to report Ready.
const startTimeout = 30 * time.Second

// start launches a worker, through spawner when it is set and the level is strict, and
// waits until it is confined.
func start(ctx context.Context, cfg Config, binary string, spawner *Spawner, proxy func(net.Listener), refused func(string)) (*process, Ready, error) {
	strictNet := cfg.Spec.Level == sandbox.LevelStrict && cfg.Spec.Network()
	landlockNet := cfg.Spec.Level == sandbox.LevelLandlock && cfg.ProxyPort > 0
	handOff := strictNet || landlockNet
	if strictNet && proxy == nil {
		return nil, Ready{}, errors.New("worker: the spec has network at level strict, and no proxy serves it (Client.SetProxy)")
	}
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, Ready{}, fmt.Errorf("worker: %w", err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		_ = reqR.Close()
		_ = reqW.Close()
		return nil, Ready{}, fmt.Errorf("worker: %w", err)
	}
	files := []*os.File{reqR, repW}
	var offer *os.File // the client's end of the socket the listener comes on
	if handOff {
		var theirs *os.File
		if offer, theirs, err = handOffPair(); err != nil {
			_, _, _, _ = reqR.Close(), reqW.Close(), repR.Close(), repW.Close()
			return nil, Ready{}, fmt.Errorf("worker: %w", err)
		}
		defer func() { _ = offer.Close() }()
		files = append(files, theirs)
	}
	p := &process{req: reqW, rep: repR, stderr: &tailBuffer{max: 8 << 10}}
	if spawner != nil && cfg.Spec.Level == sandbox.LevelStrict {
		p.child, err = spawnWorker(spawner, binary, cfg.Spec.Level, files, p.stderr)
	} else {
		p.child, err = execWorker(binary, cfg.Spec.Level, files, p.stderr)
	}
	for _, f := range files {
		_ = f.Close()
	}
	if err != nil {
		_ = reqW.Close()
		_ = repR.Close()
		return nil, Ready{}, err
	}
	p.dec = protocol.NewFrameDecoder(repR, maxFrame)
	if cfg.Spec.Level != sandbox.LevelOff {
		// Before the config goes out the worker has started nothing: everything it
		// starts is born in the cgroup.
		if pids, err := sandbox.NewPids(sandbox.DefaultMaxPids); err == nil {
			if pids.Add(p.child.pid()) == nil {
				p.pids = pids
			} else {
				_ = pids.Remove()
			}
		}
	}
	if err := p.write(frameConfig, encodeJSON(cfg)); err != nil {
		_ = p.close()
		return nil, Ready{}, p.exitError(err)
	}
	_ = repR.SetReadDeadline(time.Now().Add(startTimeout))
	stopCancel := context.AfterFunc(ctx, func() { _ = repR.SetReadDeadline(time.Now()) })
	ok := p.dec.Next()
	stopCancel()
	_ = repR.SetReadDeadline(time.Time{})
	if !ok {
		_ = p.close()
		return nil, Ready{}, p.exitError(p.dec.Err())
	}
	f := p.dec.Fields()
	if len(f) == 2 && f[0] == frameFail {
		_ = p.close()
		return nil, Ready{}, fmt.Errorf("worker: sandbox %s %w: %s", cfg.Spec.Level, ErrSetup, f[1])
	}
	var ready Ready
	if err := want(f, frameReady, 2); err != nil {
		_ = p.close()
		return nil, Ready{}, err
	}
	if err := json.Unmarshal([]byte(f[1]), &ready); err != nil {
		_ = p.close()
		return nil, Ready{}, fmt.Errorf("worker: ready: %w", err)
	}
	if p.pids != nil {
		ready.Layers = append(ready.Layers, sandbox.LayerPids)
	}
	if landlockNet {
		// Stage 1 sent its filter's listener before it became stage 2, which said READY.
		if p.stopConnects, err = serveConnects(offer, cfg.ProxyPort, refused); err != nil {
			_ = p.close()
			return nil, Ready{}, fmt.Errorf("worker: the sandbox's connect listener: %w", err)
		}
	}
	if strictNet {
		// Stage 1 sent the listener before it became stage 2, which said READY.
		if p.proxyL, err = receiveListener(offer); err != nil {
			_ = p.close()
			return nil, Ready{}, fmt.Errorf("worker: the sandbox's proxy listener: %w", err)
		}
		proxy(p.proxyL)
	}
	p.frames, p.stopped, p.readDone = make(chan []string), make(chan struct{}), make(chan struct{})
	go p.read()
	return p, ready, nil
}

// read takes every frame the worker sends until its reply pipe ends: the frames of
// MCP servers go to their connections, the others to the request waiting for them.
// Once close has begun it keeps reading, and drops them, so that the worker is never
// blocked writing.
func (p *process) read() {
	defer close(p.readDone)
	for p.dec.Next() {
		f := p.dec.Fields()
		if p.mcp.dispatch(p, f) {
			continue
		}
		select {
		case p.frames <- slices.Clone(f):
		case <-p.stopped:
		}
	}
	p.readErr = p.dec.Err()
	p.mcp.fail(p.exitError(p.readErr))
}

func (p *process) write(fields ...string) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.buf = protocol.AppendFrame(p.buf[:0], fields...)
	_, err := p.req.Write(p.buf)
	return err
}

// cancelGrace is how long a cancelled request may take to come back before the worker
// is killed: the tools' own kill grace and a margin.
const cancelGrace = 5 * time.Second

// roundTrip writes a request and reads until its reply. bye reports that the worker
// exited idle without running it.
func (p *process) roundTrip(ctx context.Context, id string, req []string, activity func()) (reply []string, bye bool, err error) {
	if err := p.write(req...); err != nil {
		// A worker that exited idle closed its end: its BYE is still to be read.
		select {
		case f, ok := <-p.frames:
			if ok && len(f) == 1 && f[0] == frameBye {
				return nil, true, nil
			}
		case <-p.readDone:
		}
		return nil, false, p.exitError(err)
	}
	done := ctx.Done()
	var grace <-chan time.Time
	for {
		select {
		case f := <-p.frames:
			switch {
			case len(f) == 2 && f[0] == frameActive:
				activity()
			case len(f) == 1 && f[0] == frameBye:
				return nil, true, nil
			case len(f) >= 2 && f[1] == id:
				return f, false, nil
			}
		case <-p.readDone:
			return nil, false, p.exitError(p.readErr)
		case <-done:
			done = nil
			_ = p.write(frameCancel, id)
			t := time.NewTimer(cancelGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			return nil, false, p.exitError(os.ErrDeadlineExceeded)
		}
	}
}

// close ends the worker: its input closes, and a worker that does not exit within a
// grace period is killed, with everything in its sandbox. It may be called more than
// once; the later calls return what the first did.
func (p *process) close() error {
	p.closeMu.Lock()
	defer p.closeMu.Unlock()
	if p.closed {
		return p.closeErr
	}
	p.closed = true
	if p.stopped != nil {
		close(p.stopped)
	}
	if p.proxyL != nil {
		_ = p.proxyL.Close() // it holds the sandbox's network namespace
	}
	_ = p.req.Close()
	done := make(chan error, 1)
	go func() { done <- p.child.wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(cancelGrace):
		_ = p.child.kill()
		err = <-done
	}
	_ = p.rep.Close()
	if p.readDone != nil {
		<-p.readDone
	}
	if p.stopConnects != nil {
		p.stopConnects()
	}
	if p.pids != nil {
		if rerr := p.pids.Remove(); rerr != nil && err == nil {
			err = rerr
		}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = nil // an exit status after its input closed is not the caller's problem
	}
	p.closeErr = err
	return err
}

// exitError describes a worker that stopped answering, with the end of its stderr.
func (p *process) exitError(err error) error {
	msg := "worker: stopped answering"
	if err != nil {
		msg += ": " + err.Error()
	}
	if t := p.stderr.String(); t != "" {
		msg += ": " + t
	}
	return errors.New(msg)
}

// tailBuffer keeps the last max bytes written to it. It is safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sandbox"
)

// process is one running worker.
type process struct {
	child  child
	req    *os.File
	rep    *os.File
	dec    *protocol.FrameDecoder
	stderr *tailBuffer
	cgroup *sandbox.Cgroup // nil when no pids or memory hierarchy is writable
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
	p, offer, err := launch(spawner, binary, cfg.Spec.Level, handOff)
	if err != nil {
		return nil, Ready{}, err
	}
	if offer != nil {
		defer func() { _ = offer.Close() }()
	}
	p.dec = protocol.NewFrameDecoder(p.rep, maxFrame)
	if cfg.Spec.Level != sandbox.LevelOff {
		// Before the config goes out the worker has started nothing: everything it
		// starts is born in the cgroup.
		if cg, err := sandbox.NewCgroup(sandbox.CgroupLimits{Pids: sandbox.DefaultMaxPids, Memory: cfg.Spec.MemoryLimit()}); err == nil {
			if cg.Add(p.child.pid()) == nil {
				p.cgroup = cg
			} else {
				_ = cg.Remove()
			}
		}
	}
	if err := p.write(frameConfig, encodeJSON(cfg)); err != nil {
		_ = p.close()
		return nil, Ready{}, p.exitError(err)
	}
	_ = p.rep.SetReadDeadline(time.Now().Add(startTimeout))
	stopCancel := context.AfterFunc(ctx, func() { _ = p.rep.SetReadDeadline(time.Now()) })
	ok := p.dec.Next()
	stopCancel()
	_ = p.rep.SetReadDeadline(time.Time{})
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
	if p.cgroup != nil {
		ready.Layers = append(ready.Layers, p.cgroup.Layers()...)
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

// launch makes a worker's pipes and starts it, through spawner when it is set and the
// level is strict, and returns it with the client's end of the socket its listener
// comes on (handOff). It holds the spawner's turn from the first pipe to the close of
// the worker's ends, so a start waiting for its turn holds no descriptor: a thousand
// sessions that call a tool at once would otherwise hold six each while they queue,
// more than the open-files limit the run was checked against.
func launch(spawner *Spawner, binary string, level sandbox.Level, handOff bool) (*process, *os.File, error) {
	defer spawner.take()()
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("worker: %w", err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		_, _ = reqR.Close(), reqW.Close()
		return nil, nil, fmt.Errorf("worker: %w", err)
	}
	files := []*os.File{reqR, repW}
	var offer *os.File
	if handOff {
		var theirs *os.File
		if offer, theirs, err = handOffPair(); err != nil {
			_, _, _, _ = reqR.Close(), reqW.Close(), repR.Close(), repW.Close()
			return nil, nil, fmt.Errorf("worker: %w", err)
		}
		files = append(files, theirs)
	}
	p := &process{req: reqW, rep: repR, stderr: &tailBuffer{max: 8 << 10}}
	if spawner != nil && level == sandbox.LevelStrict {
		p.child, err = spawnWorker(spawner, binary, level, files, p.stderr)
	} else {
		p.child, err = execWorker(binary, level, files, p.stderr)
	}
	for _, f := range files {
		_ = f.Close()
	}
	if err != nil {
		_, _ = reqW.Close(), repR.Close()
		if offer != nil {
			_ = offer.Close()
		}
		return nil, nil, err
	}
	return p, offer, nil
}

// oomKills is how many of the session's processes the kernel has killed for its memory
// limit so far.
func (p *process) oomKills() int {
	if p.cgroup == nil {
		return 0
	}
	return p.cgroup.OOMKills()
}

// memoryNote is the line a request's output ends with when the kernel killed a process
// of the session for its memory limit while the request ran (kills is oomKills before
// it); "" when it did not.
func (p *process) memoryNote(kills int) string {
	if p.oomKills() <= kills {
		return ""
	}
	return fmt.Sprintf("\n[... the kernel killed a process: the session reached its memory limit of %d MiB ...]", p.cgroup.MemoryLimit()>>20)
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
	if p.cgroup != nil {
		if rerr := p.cgroup.Remove(); rerr != nil && err == nil {
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

// tailBuffer keeps the first and the last of what is written to it, max bytes in all:
// a quarter from the start, where a process says why it stops ("fatal error: …" before
// a goroutine dump), and the rest from the end. It is safe for concurrent use.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	head, b []byte
	dropped int // bytes between head and b that were left out
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if room := t.max/4 - len(t.head); room > 0 {
		take := min(room, len(p))
		t.head = append(t.head, p[:take]...)
		p = p[take:]
	}
	t.b = append(t.b, p...)
	if keep := t.max - t.max/4; len(t.b) > keep {
		t.dropped += len(t.b) - keep
		t.b = t.b[len(t.b)-keep:]
	}
	return n, nil
}

// ReadFrom copies r into the buffer until r ends, through a buffer of 1 KiB: the
// copies of every running worker's stderr (os/exec's, and a spawned worker's) come
// here, where io.Copy would hold 32 KiB for each.
func (t *tailBuffer) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, 1<<10)
	var n int64
	for {
		m, err := r.Read(buf)
		if m > 0 {
			_, _ = t.Write(buf[:m])
			n += int64(m)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped == 0 {
		return string(t.head) + string(t.b)
	}
	return fmt.Sprintf("%s\n[... %d bytes left out ...]\n%s", t.head, t.dropped, t.b)
}

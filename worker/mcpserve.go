package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentrun/agentrun/agent/tools"
)

// The worker's side of stdio MCP servers: it starts each server confined like a Bash
// command (its own process group, the workspace as working directory, the tools'
// scrubbed environment), writes what the runner sends to the server's stdin, and sends
// back what the server writes to its stdout, in MCPOUT frames, until it exits.

// MCPCommand is a stdio MCP server to start.
type MCPCommand struct {
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	// Env is added to the tools' environment, each entry replacing one of the same
	// name.
	Env []string `json:"env,omitempty"`
}

// Bounds of a stdio server's shutdown and buffers.
const (
	// mcpStdinGrace is how long a server has to exit after its stdin closed, and
	// mcpTermGrace how long after SIGTERM, before its group gets SIGKILL.
	mcpStdinGrace = 2 * time.Second
	mcpTermGrace  = 2 * time.Second
	// mcpMaxQueued bounds the bytes waiting for a server that does not read its stdin;
	// past it the server is stopped.
	mcpMaxQueued = 64 << 20
	// mcpChunk is the most stdout bytes one MCPOUT frame carries.
	mcpChunk = 256 << 10
	// mcpStderrTail is how much of a server's stderr its exit report keeps.
	mcpStderrTail = 2 << 10
)

// mcpServers are the running stdio servers of one worker.
type mcpServers struct {
	s  *server
	mu sync.Mutex
	m  map[string]*mcpProc
	wg sync.WaitGroup // every goroutine of every server
}

// mcpProc is one running server.
type mcpProc struct {
	id     string
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *os.File
	tail   *tailBuffer
	exited chan struct{} // closed when the process has been waited for

	mu       sync.Mutex // guards the stdin queue
	queue    [][]byte
	queued   int
	wake     chan struct{} // cap 1: the writer has work
	closing  bool          // stdin is to be closed once the queue is written
	stopOnce sync.Once
	why      string // what stopped it, when agentrun did
}

// start starts the server of an MCPSTART request and returns its reply.
func (ms *mcpServers) start(id, spec string) []string {
	var c MCPCommand
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		return []string{frameMCPStarted, id, "", "bad MCP server spec: " + err.Error()}
	}
	p, err := ms.launch(id, c)
	if err != nil {
		return []string{frameMCPStarted, id, "", err.Error()}
	}
	return []string{frameMCPStarted, id, strconv.Itoa(p.cmd.Process.Pid), ""}
}

func (ms *mcpServers) launch(id string, c MCPCommand) (*mcpProc, error) {
	ws := ms.s.cfg.Spec.Workspace
	path := c.Command
	if strings.Contains(path, "/") {
		if !filepath.IsAbs(path) {
			path = filepath.Join(ws, path)
		}
	} else {
		found, err := exec.LookPath(path)
		if err != nil {
			return nil, fmt.Errorf("start %s: not found in PATH", c.Command)
		}
		path = found
	}
	cmd := exec.Command(path, c.Args...)
	cmd.Args[0] = c.Command
	cmd.Dir = ws
	cmd.Env = mergeEnv(ms.s.env.ProcEnv, c.Env)
	cmd.SysProcAttr = tools.GroupAttr()
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, fmt.Errorf("start %s: %w", c.Command, err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := ms.s.env.StartProc(cmd); err != nil {
		closeAll()
		return nil, fmt.Errorf("start %s: %w", c.Command, unwrapExec(err))
	}
	_, _, _ = inR.Close(), outW.Close(), errW.Close()
	p := &mcpProc{id: id, cmd: cmd, stdin: inW, stdout: outR, stderr: errR, tail: &tailBuffer{max: mcpStderrTail},
		exited: make(chan struct{}), wake: make(chan struct{}, 1)}
	ms.mu.Lock()
	if ms.m == nil {
		ms.m = map[string]*mcpProc{}
	}
	ms.m[id] = p
	ms.mu.Unlock()
	var readers sync.WaitGroup
	readers.Go(func() { ms.relay(p) })
	readers.Go(func() { copyTail(p.stderr, p.tail) })
	ms.wg.Go(func() { p.writeLoop() })
	ms.wg.Go(func() { ms.wait(p, &readers) })
	return p, nil
}

// unwrapExec drops the path of an exec error, which names the file the runner sees.
func unwrapExec(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// mergeEnv returns base with the entries of extra, each replacing one of its name.
func mergeEnv(base, extra []string) []string {
	if len(extra) == 0 {
		return base
	}
	names := map[string]bool{}
	for _, kv := range extra {
		name, _, _ := strings.Cut(kv, "=")
		names[name] = true
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		if name, _, _ := strings.Cut(kv, "="); !names[name] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// relay sends what the server writes to its stdout to the runner.
func (ms *mcpServers) relay(p *mcpProc) {
	buf := make([]byte, mcpChunk)
	for {
		n, err := p.stdout.Read(buf)
		if n > 0 {
			if ms.s.send(frameMCPOut, p.id, string(buf[:n])) != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func copyTail(r *os.File, t *tailBuffer) {
	buf := make([]byte, 4<<10)
	for {
		n, err := r.Read(buf)
		_, _ = t.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// wait reaps the server, ends what it left in its group, and reports its exit after
// the last of its output.
func (ms *mcpServers) wait(p *mcpProc, readers *sync.WaitGroup) {
	err := ms.s.env.WaitProc(p.cmd)
	tools.KillGroup(p.cmd.Process.Pid)
	// Whatever left the group may still hold the pipes: stop reading soon.
	deadline := time.Now().Add(500 * time.Millisecond)
	_ = p.stdout.SetReadDeadline(deadline)
	_ = p.stderr.SetReadDeadline(deadline)
	readers.Wait()
	_, _ = p.stdout.Close(), p.stderr.Close()
	p.mu.Lock()
	why := p.why
	p.closing = true
	p.mu.Unlock()
	p.signal()
	close(p.exited)
	ms.mu.Lock()
	delete(ms.m, p.id)
	ms.mu.Unlock()
	_ = ms.s.send(frameMCPExit, p.id, exitReason(err, why), strings.TrimSpace(p.tail.String()))
}

// exitReason says how a server ended: "exit status 2", "killed by SIGKILL", and what
// agentrun did first when it stopped the server.
func exitReason(err error, why string) string {
	msg := "exit status 0"
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			msg = "killed by " + tools.SignalName(ws.Signal())
		} else {
			msg = "exit status " + strconv.Itoa(ee.ExitCode())
		}
	case err != nil:
		msg = err.Error()
	}
	if why != "" {
		msg += " (" + why + ")"
	}
	return msg
}

// write queues data for the server's stdin.
func (ms *mcpServers) write(id, data string) {
	p := ms.get(id)
	if p == nil {
		return // it has exited; its MCPEXIT is on the way
	}
	p.mu.Lock()
	over := p.queued+len(data) > mcpMaxQueued
	if !over && !p.closing {
		p.queue = append(p.queue, []byte(data))
		p.queued += len(data)
	}
	p.mu.Unlock()
	if over {
		ms.stop(p, "it did not read its stdin")
		return
	}
	p.signal()
}

func (p *mcpProc) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes the queue to the server's stdin, and closes stdin when asked to.
func (p *mcpProc) writeLoop() {
	defer func() { _ = p.stdin.Close() }()
	for {
		p.mu.Lock()
		q, closing := p.queue, p.closing
		p.queue, p.queued = nil, 0
		p.mu.Unlock()
		for _, b := range q {
			if _, err := p.stdin.Write(b); err != nil {
				return // the server closed its stdin, or exited
			}
		}
		if closing {
			return
		}
		select {
		case <-p.wake:
		case <-p.exited:
			return
		}
	}
}

func (ms *mcpServers) get(id string) *mcpProc {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.m[id]
}

// close stops the server of an MCPCLOSE request.
func (ms *mcpServers) close(id string) {
	if p := ms.get(id); p != nil {
		ms.stop(p, "")
	}
}

// stop ends a server, in bounded time: its stdin closes; a server still running after
// mcpStdinGrace gets SIGTERM, and after mcpTermGrace more its group gets SIGKILL.
func (ms *mcpServers) stop(p *mcpProc, why string) {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.closing, p.why = true, why
		p.queue, p.queued = nil, 0
		p.mu.Unlock()
		p.signal()
		ms.wg.Go(func() {
			select {
			case <-p.exited:
				return
			case <-time.After(mcpStdinGrace):
			}
			_ = tools.SignalGroup(p.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-p.exited:
				return
			case <-time.After(mcpTermGrace):
			}
			_ = tools.SignalGroup(p.cmd.Process.Pid, syscall.SIGKILL)
		})
	})
}

// killAll ends every server at once (the runner is gone) and waits for their
// goroutines.
func (ms *mcpServers) killAll() {
	ms.mu.Lock()
	procs := make([]*mcpProc, 0, len(ms.m))
	for _, p := range ms.m {
		procs = append(procs, p)
	}
	ms.mu.Unlock()
	for _, p := range procs {
		_ = tools.SignalGroup(p.cmd.Process.Pid, syscall.SIGKILL)
	}
	ms.wg.Wait()
}

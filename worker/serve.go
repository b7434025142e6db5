package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/policy"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sandbox"
)

// serveMain is stage 2: it reads the config stage 1 passed (from fdConfig, or from the
// descriptor its one argument names), confines itself, reports Ready and serves
// requests until its input ends or it exits idle.
func serveMain(args []string) int {
	nameStage2()
	reserveThreads(spareThreads)
	// Non-blocking descriptors make pollable Files, whose Close ends a Read blocked in
	// another goroutine: the request reader stops when the worker exits idle.
	_ = syscall.SetNonblock(fdRequests, true)
	_ = syscall.SetNonblock(fdReplies, true)
	in, out := os.NewFile(fdRequests, "requests"), os.NewFile(fdReplies, "replies")
	fd := fdConfig
	if len(args) == 1 {
		if n, err := strconv.Atoi(args[0]); err == nil && n > fdConfig {
			fd = n
		}
	}
	cfgFile := os.NewFile(uintptr(fd), "config")
	dec := protocol.NewFrameDecoder(cfgFile, maxFrame)
	if !dec.Next() || want(dec.Fields(), frameConfig, 2) != nil {
		fmt.Fprintf(os.Stderr, "worker: no config from stage 1: %v\n", dec.Err())
		return 2
	}
	var cfg Config
	if err := json.Unmarshal([]byte(dec.Fields()[1]), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "worker: config: %v\n", err)
		return 2
	}
	_ = cfgFile.Close()
	for _, kv := range cfg.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			_ = os.Setenv("PATH", v) // where the tools look up bash and the commands they run
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &server{cfg: cfg, out: out}
	s.mcp.s = s
	if err := notDumpable(); err != nil {
		_ = s.send(frameFail, err.Error())
		return 1
	}
	if cfg.Ready == nil {
		_ = s.send(frameFail, "stage 1 reported no confinement")
		return 1
	}
	ready, extra := *cfg.Ready, proxyEnvOf(cfg)
	ready.PID = os.Getpid()
	s.env = tools.Env{Workspace: cfg.Spec.Workspace, Home: cfg.Spec.Home, Timeout: cfg.Timeout,
		ProcEnv: append(slices.Clone(cfg.Env), extra...), MaxOutput: cfg.MaxOutput, KeepBackground: true}
	s.env.Policy, _ = policy.Parse(cfg.BashMode) // an invalid mode denies everything
	if execInPlace {
		// This process, which stage 1 became, adopts the session's orphans: it reaps
		// them while it serves, and ends what is left when it stops. (Where stage 1
		// stays, it reaps.)
		reaper := newOrphans()
		s.env.Procs = reaper
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() { onChildExit(stop, reaper.reap) })
		defer killRest(cfg.Spec.Level == sandbox.LevelStrict)
		defer wg.Wait()
		defer close(stop)
	}
	s.env.Procs = preferVictims(s.env.Procs, cfg.OOMScoreFD)
	if err := s.send(frameReady, encodeJSON(ready)); err != nil {
		return 1
	}
	return s.serve(ctx, in)
}

// server answers one runner.
type server struct {
	cfg Config
	env tools.Env
	mu  sync.Mutex // serialises writes to out
	out io.Writer
	buf []byte
	mcp mcpServers
}

func (s *server) send(fields ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = protocol.AppendFrame(s.buf[:0], fields...)
	_, err := s.out.Write(s.buf)
	return err
}

// call is the request being run.
type call struct {
	id     string
	cancel context.CancelFunc
}

// serve runs requests one at a time. It returns when in ends (the runner closed the
// pipe or is gone) or, after IdleExit without a request, when no other process of the
// session remains: then it says BYE first, so the runner knows that a request it sent
// meanwhile was not run. The countdown starts at the first frame: a worker is started
// for a request, which it serves however long the runner takes to send it.
func (s *server) serve(ctx context.Context, in *os.File) int {
	frames := make(chan []string)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() { _ = in.Close() }() // ends the reader's blocked Read
	stop := make(chan struct{})
	defer close(stop)
	wg.Go(func() {
		defer close(frames)
		dec := protocol.NewFrameDecoder(in, maxFrame)
		for dec.Next() {
			select {
			case frames <- slices.Clone(dec.Fields()):
			case <-stop:
				return
			}
		}
	})
	idle := time.NewTimer(s.idleExit())
	defer idle.Stop()
	// One call at a time, so a buffer of one lets a call end after serve has returned
	// (its input ended mid-call) instead of blocking the wait for it.
	done := make(chan []string, 1)
	var cur *call
	heard := false // a frame has come
	var running sync.WaitGroup
	defer running.Wait()
	defer s.mcp.killAll()
	for {
		var idleC <-chan time.Time
		if cur == nil && heard && s.cfg.IdleExit > 0 {
			idleC = idle.C
		}
		select {
		case f, ok := <-frames:
			if !ok {
				if cur != nil {
					cur.cancel()
				}
				return 0
			}
			if !heard {
				heard = true
				idle.Reset(s.idleExit())
			}
			if len(f) >= 2 && f[0] == frameCancel {
				if cur != nil && cur.id == f[1] {
					cur.cancel()
				}
				continue
			}
			if s.mcpFrame(f) {
				idle.Reset(s.idleExit())
				continue
			}
			if cur != nil {
				_ = s.send(frameResult, f[min(1, len(f)-1)], "worker busy: one request at a time", "1")
				continue
			}
			cctx, cancel := context.WithCancel(ctx)
			cur = &call{id: f[min(1, len(f)-1)], cancel: cancel}
			running.Go(func() {
				defer cancel()
				done <- s.run(cctx, f)
			})
		case r := <-done:
			cur = nil
			if err := s.send(r...); err != nil {
				return 1
			}
			idle.Reset(s.idleExit())
		case <-idleC:
			if othersAlive(s.cfg.Spec.Level == sandbox.LevelStrict) {
				idle.Reset(s.idleExit())
				continue
			}
			_ = s.send(frameBye)
			return 0
		}
	}
}

// mcpFrame handles a frame of the MCP servers, which run beside the one request
// being served; it reports whether f was one.
func (s *server) mcpFrame(f []string) bool {
	switch {
	case len(f) == 3 && f[0] == frameMCPIn:
		s.mcp.write(f[1], f[2])
	case len(f) == 3 && f[0] == frameMCPStart:
		_ = s.send(s.mcp.start(f[1], f[2])...)
	case len(f) == 2 && f[0] == frameMCPClose:
		s.mcp.close(f[1])
	default:
		return false
	}
	return true
}

func (s *server) idleExit() time.Duration {
	if s.cfg.IdleExit <= 0 {
		return time.Hour
	}
	return s.cfg.IdleExit
}

// run executes one request and returns its reply.
func (s *server) run(ctx context.Context, f []string) []string {
	switch {
	case len(f) == 5 && f[0] == frameCall:
		env, err := withEnv(s.env.ProcEnv, f[4])
		if err != nil {
			return []string{frameResult, f[1], err.Error(), "1"}
		}
		return s.runTool(ctx, f[1], f[2], f[3], env)
	case len(f) == 6 && f[0] == frameExec:
		id := f[1]
		env, err := withEnv(s.env.ProcEnv, f[5])
		if err != nil {
			return []string{frameExecDone, id, "", "-1", "0", err.Error()}
		}
		res := tools.Exec(ctx, tools.ExecOptions{Command: f[2], Dir: s.cfg.Spec.Workspace, Env: env,
			Timeout: time.Duration(atoi(f[3])) * time.Millisecond, MaxOutput: atoi(f[4]), Procs: s.env.Procs})
		msg := ""
		if res.Err != nil {
			msg = res.Err.Error()
		}
		return []string{frameExecDone, id, res.Output, strconv.Itoa(res.ExitCode), flag(res.TimedOut), msg}
	}
	return []string{frameResult, f[min(1, len(f)-1)], fmt.Sprintf("worker: malformed request %q", first(f)), "1"}
}

// runTool runs a built-in tool, its processes with the environment env; a panic
// becomes an error result.
func (s *server) runTool(ctx context.Context, id, name, input string, env []string) (reply []string) {
	t, ok := tools.Lookup(name)
	if !ok {
		return []string{frameResult, id, fmt.Sprintf("unknown tool %q", name), "1"}
	}
	defer func() {
		if v := recover(); v != nil {
			reply = []string{frameResult, id, fmt.Sprintf("tool %s panicked: %v", name, v), "1"}
		}
	}()
	te := s.env
	te.ProcEnv = env
	te.Activity = func() { _ = s.send(frameActive, id) }
	r := t.Run(ctx, tools.Call{Input: json.RawMessage(input), Env: &te})
	return []string{frameResult, id, r.Content, flag(r.IsError)}
}

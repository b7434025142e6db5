//go:build unix

package worker

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sandbox"
)

// Command is the hidden subcommand that runs the worker: the binary that calls Main
// must dispatch to it when its first argument is Command.
const Command = "__worker"

// The worker's file descriptors, as the runner and stage 1 pass them.
const (
	fdRequests = 3
	fdReplies  = 4
	fdConfig   = 5 // stage 2 started as a child: its config
	// fdHandOff is stage 1's with network: the socket that the listener on the
	// sandbox's loopback (level strict) or the seccomp filter's listener of connect(2)
	// (level landlock) goes to the runner on.
	fdHandOff = 5
)

// Main runs the worker process with the arguments after Command and returns its exit
// code. Stage 1 (no arguments) reads the config, builds the sandbox's root when the
// level is strict, starts stage 2 ("serve") and reaps every process until stage 2
// ends; then it kills what is left and exits. Stage 2 confines itself and serves.
// "spawn" is a Spawner's process, which starts stage 1 of the workers of a run. Each
// first marks every inherited descriptor past stderr close-on-exec (closeOnExec).
func Main(args []string) int {
	if err := closeOnExec(); err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	if len(args) > 0 && args[0] == "serve" {
		return serveMain(args[1:])
	}
	if len(args) > 0 && args[0] == "spawn" {
		return spawnMain()
	}
	return initMain()
}

// initMain is stage 1: pid 1 of the sandbox's pid namespace at level strict, a child
// subreaper otherwise. On Linux it then becomes stage 2 by exec, which inherits all of
// that; elsewhere it starts stage 2 as its child and reaps until stage 2 ends.
func initMain() int {
	in, out := os.NewFile(fdRequests, "requests"), os.NewFile(fdReplies, "replies")
	// Both stay open until this process becomes stage 2, which serves on their numbers:
	// a File the collector finds unreachable is closed by its finalizer, and the next
	// descriptor opened (the config's memory file) took the number of the requests.
	// The exec leaves the deferred calls unrun, and keeps the Files reachable to it.
	defer runtime.KeepAlive(in)
	defer runtime.KeepAlive(out)
	dec := protocol.NewFrameDecoder(in, maxFrame)
	if !dec.Next() {
		fmt.Fprintf(os.Stderr, "worker: no config: %v\n", dec.Err())
		return 2
	}
	f := dec.Fields()
	if err := want(f, frameConfig, 2); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	raw := f[1]
	var cfg Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "worker: config: %v\n", err)
		return 2
	}
	fail := func(err error) int {
		_, _ = out.Write(protocol.AppendFrame(nil, frameFail, err.Error()))
		return 1
	}
	if own := ownBuild(); cfg.Build != own {
		exe, _ := os.Executable()
		return fail(fmt.Errorf("worker: %s is from another build (%s) than the agentrun that started it (%s): install both from one build",
			exe, own, cfg.Build))
	}
	if cfg.Spec.Level == sandbox.LevelStrict {
		if err := sandbox.EnterRoot(cfg.Spec, cfg.Hidden); err != nil {
			return fail(err)
		}
		if cfg.Spec.Network() {
			port, err := handOverLoopback()
			if err != nil {
				return fail(err)
			}
			cfg.LoopbackPort = port
		}
	} else if err := setSubreaper(); err != nil {
		return fail(err)
	}
	cfg.OOMScoreFD = openOOMScore() // confined, this process may no longer open it
	ready, err := confineThread(cfg)
	if err != nil {
		return fail(err)
	}
	cfg.Ready = &ready
	if execInPlace {
		// Nothing of stage 1 has to outlive stage 2's start: this process becomes
		// stage 2, and reaps what it adopts itself.
		return fail(becomeStage2(cfg.Spec.Workspace, encodeJSON(cfg)))
	}
	raw = encodeJSON(cfg)
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return fail(err)
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"agentrun-worker", Command, "serve"}, &syscall.ProcAttr{
		Dir:   cfg.Spec.Workspace,
		Env:   workerEnv,
		Files: []uintptr{null.Fd(), null.Fd(), os.Stderr.Fd(), in.Fd(), out.Fd(), cfgR.Fd()},
		Sys:   stage2Attr(),
	})
	if err != nil {
		return fail(fmt.Errorf("start worker: %w", err))
	}
	_ = cfgR.Close()
	_ = null.Close()
	_, werr := cfgW.Write(protocol.AppendFrame(nil, frameConfig, raw))
	_ = cfgW.Close()
	_ = in.Close()
	_ = out.Close()
	if werr != nil {
		fmt.Fprintf(os.Stderr, "worker: pass config: %v\n", werr)
	}
	code := reapUntil(pid)
	killRest(cfg.Spec.Level == sandbox.LevelStrict)
	return code
}

// reapUntil waits for every child until pid has ended and returns pid's exit code.
func reapUntil(pid int) int {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 1 // ECHILD: nothing left to wait for
		}
		if wpid == pid {
			if ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return ws.ExitStatus()
		}
	}
}

// killRest ends every process that is left: at level strict all of the pid
// namespace; otherwise every descendant, which as a subreaper this process adopts.
func killRest(namespace bool) {
	if namespace {
		_ = syscall.Kill(-1, syscall.SIGKILL)
		for {
			if _, err := syscall.Wait4(-1, nil, 0, nil); err != nil && err != syscall.EINTR {
				return
			}
		}
	}
	for range 1000 {
		kids := Children(os.Getpid())
		if len(kids) == 0 {
			return
		}
		for _, k := range kids {
			_ = syscall.Kill(-k, syscall.SIGKILL)
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
		for range kids {
			_, _ = syscall.Wait4(-1, nil, 0, nil)
		}
	}
}

// Children lists the child processes of pid, from /proc/PID/task/*/children (none
// when it has exited): how stage 1 finds what is left to kill, and how tests look at a
// worker's process tree.
func Children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

package tools

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// killGrace is how long a cancelled command's process group has between SIGTERM
	// and SIGKILL, and how long Run waits for it to be reaped.
	killGrace = 2 * time.Second
	// drainGrace bounds reading output after the process group is gone, for a
	// process that left the group but kept the pipes open.
	drainGrace = 500 * time.Millisecond
	// activityEvery is the least time between two Activity calls of one command.
	activityEvery = 200 * time.Millisecond
	// defaultPath is the PATH of the minimal process environment.
	defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// procResult is what one shell command did.
type procResult struct {
	stdout, stderr *capture
	exitCode       int    // meaningful when signal is "" and startErr is nil
	signal         string // the signal that killed the shell, if any
	timedOut       bool
	cancelled      bool
	orphanedPipes  bool // output was still open after the group was gone
	startErr       error
}

// runShell runs script with bash -c (not a login shell) in the workspace, with
// stdin from /dev/null, in its own process group. When timeout passes or ctx is
// cancelled, the group gets SIGTERM and, after killGrace, SIGKILL. When the shell
// exits, whatever it left running in its group is killed too, so no process outlives
// the call. Output is captured in bounded memory, limit bytes of head and tail each.
func runShell(ctx context.Context, env *Env, script string, timeout time.Duration, limit int) procResult {
	res := procResult{stdout: newCapture(limit), stderr: newCapture(limit)}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(runCtx, "bash", "-c", script)
	if ws := env.workspace(); ws != "" {
		cmd.Dir = ws
	}
	cmd.Env = procEnv(env)
	// Its own process group, so the whole tree can be killed; and the shell is killed
	// with agentrun if agentrun itself dies (on Linux). What the shell started is not:
	// env.Groups is told of the group, so a supervisor can end it then.
	cmd.SysProcAttr = shellAttr()
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = killGrace

	outR, outW, err := os.Pipe()
	if err != nil {
		res.startErr = err
		return res
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = outR.Close()
		_ = outW.Close()
		res.startErr = err
		return res
	}
	defer func() { _ = outR.Close() }()
	defer func() { _ = errR.Close() }()
	cmd.Stdout, cmd.Stderr = outW, errW
	err = env.StartProc(cmd)
	_ = outW.Close()
	_ = errW.Close()
	if err != nil {
		res.startErr = err
		return res
	}
	pgid := cmd.Process.Pid
	groups := env.groups()
	if groups != nil {
		groups.Started(pgid)
	}

	act := &activity{fn: env.activityFunc()}
	var wg sync.WaitGroup
	var orphaned atomic.Bool
	for _, s := range []struct {
		r *os.File
		c *capture
	}{{outR, res.stdout}, {errR, res.stderr}} {
		wg.Go(func() {
			if copyOutput(s.r, s.c, act) {
				orphaned.Store(true)
			}
		})
	}

	waitErr := env.WaitProc(cmd)
	if env == nil || !env.KeepBackground || runCtx.Err() != nil {
		killGroup(pgid)
		if groups != nil {
			groups.Ended(pgid)
		}
	}
	// Whatever escaped the group (setsid) may still hold the pipes: stop reading soon.
	deadline := time.Now().Add(drainGrace)
	_ = outR.SetReadDeadline(deadline)
	_ = errR.SetReadDeadline(deadline)
	wg.Wait()

	res.orphanedPipes = orphaned.Load()
	res.timedOut = errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	res.cancelled = ctx.Err() != nil
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.signal = signalName(ws.Signal())
		} else {
			res.exitCode = exitErr.ExitCode()
		}
	default:
		res.exitCode = -1
	}
	return res
}

// copyOutput reads r into c until EOF, calling act as output arrives. It reports
// whether reading stopped at the drain deadline rather than at EOF.
func copyOutput(r *os.File, c *capture, act *activity) bool {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = c.Write(buf[:n])
			act.touch()
		}
		if err != nil {
			return errors.Is(err, os.ErrDeadlineExceeded)
		}
	}
}

// signalGroup sends sig to the process group pgid; a group that is gone is done.
func signalGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// killGroup sends SIGKILL to what is left of the process group and waits, at most
// killGrace, until none of its members runs any more. Members that are already
// zombies count as gone: orphans are reaped by init, which this process cannot
// hurry.
func killGroup(pgid int) {
	if syscall.Kill(-pgid, syscall.SIGKILL) != nil {
		return // ESRCH: nothing was left
	}
	deadline := time.Now().Add(killGrace)
	for delay := time.Millisecond; groupRunning(pgid) && time.Now().Before(deadline); delay = min(2*delay, 50*time.Millisecond) {
		time.Sleep(delay)
	}
}

// groupRunning reports whether a member of the process group may still run. Where
// /proc exists it ignores zombies; elsewhere any member counts.
func groupRunning(pgid int) bool {
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := strconv.Itoa(pgid)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// procEnv is the environment of a command: env.ProcEnv, or a minimal one.
func procEnv(env *Env) []string {
	if env != nil && env.ProcEnv != nil {
		return env.ProcEnv
	}
	home := env.home()
	if home == "" {
		home = env.workspace()
	}
	return []string{"PATH=" + defaultPath, "HOME=" + home, "LANG=C.UTF-8", "TERM=dumb"}
}

func (e *Env) groups() Groups {
	if e == nil {
		return nil
	}
	return e.Groups
}

func (e *Env) activityFunc() func() {
	if e == nil {
		return nil
	}
	return e.Activity
}

// activity calls fn at most once per activityEvery. It is safe for concurrent use.
type activity struct {
	fn   func()
	last atomic.Int64
}

func (a *activity) touch() {
	if a.fn == nil {
		return
	}
	now := time.Now().UnixNano()
	last := a.last.Load()
	if last != 0 && now-last < int64(activityEvery) {
		return
	}
	if a.last.CompareAndSwap(last, now) {
		a.fn()
	}
}

// signalName names the signals a command commonly dies of.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGBUS:
		return "SIGBUS"
	default:
		return s.String()
	}
}

//go:build linux

// Command floorstage is the process floor of a session, for the benchmarks: the
// processes a session's worker needs, each a minimal static Go program doing nothing
// of agentrun's work. "launch N C D FLAGS S" starts N copies of itself, at most C at a
// time, each in new namespaces of the clone flags FLAGS (a decimal number; with
// CLONE_NEWUSER its user is mapped to root there, as a sandbox's is) and each the first
// of a chain of S stages in one process: a stage execs the next one, as a worker's
// stage 1 becomes its stage 2, and the last waits out D (the session's model time) and
// exits. The launcher exits 0 once every chain has ended well.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "floorstage:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 6 && args[0] == "launch":
		n, err1 := strconv.Atoi(args[1])
		c, err2 := strconv.Atoi(args[2])
		d, err3 := time.ParseDuration(args[3])
		flags, err4 := strconv.ParseUint(args[4], 10, 64)
		stages, err5 := strconv.Atoi(args[5])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || n < 0 || c < 1 || stages < 1 {
			return fmt.Errorf("launch: bad arguments %q", args[1:])
		}
		return launch(n, c, d, uintptr(flags), stages)
	case len(args) == 3 && args[0] == "stage":
		left, err1 := strconv.Atoi(args[1])
		d, err2 := time.ParseDuration(args[2])
		if err1 != nil || err2 != nil {
			return fmt.Errorf("stage: bad arguments %q", args[1:])
		}
		if left > 1 { // the next stage replaces this one, as a worker's stage 2 does
			return syscall.Exec("/proc/self/exe", []string{"floorstage", "stage", strconv.Itoa(left - 1), args[2]}, os.Environ())
		}
		time.Sleep(d)
		return nil
	}
	return fmt.Errorf("usage: floorstage launch N C D FLAGS STAGES (got %q)", args)
}

// launch runs n chains of stages, c at a time: c goroutines, each starting one chain's
// first stage and waiting for it before the next.
func launch(n, c int, d time.Duration, flags uintptr, stages int) error {
	attr := &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	if flags&syscall.CLONE_NEWUSER != 0 {
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	errs := make([]error, c)
	var wg sync.WaitGroup
	for i := range c {
		wg.Go(func() {
			for range next {
				if err := start(attr, "stage", strconv.Itoa(stages), d.String()); err != nil && errs[i] == nil {
					errs[i] = err
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// start runs this executable with args and attr, and waits for it to exit 0.
func start(attr *syscall.SysProcAttr, args ...string) error {
	pid, err := syscall.ForkExec("/proc/self/exe", append([]string{"floorstage"}, args...), &syscall.ProcAttr{
		Files: []uintptr{0, 1, 2}, Sys: attr})
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("wait: %w", err)
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return fmt.Errorf("%s: ended %v", strings.Join(args, " "), ws)
	}
	return nil
}

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// AncestorSignals are the Signals that protect the calling process's ancestors, its
// parent up to pid 1 (the runner, and what started it), with their process groups. It
// must run before the process is confined, while /proc shows them.
func AncestorSignals() (Signals, error) {
	var s Signals
	for pid := os.Getppid(); pid > 0; {
		ppid, pgrp, err := procParent(pid)
		if err != nil {
			return Signals{}, fmt.Errorf("ancestors: %w", err)
		}
		s.Pids = append(s.Pids, pid)
		if pgrp > 0 && !slices.Contains(s.Groups, pgrp) {
			s.Groups = append(s.Groups, pgrp)
		}
		if pid == 1 {
			break
		}
		pid = ppid
	}
	return s, nil
}

// procParent reads the parent and the process group of pid from /proc/PID/stat.
func procParent(pid int) (ppid, pgrp int, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// pid (comm) state ppid pgrp …: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	if ppid, err = strconv.Atoi(string(f[1])); err == nil {
		pgrp, err = strconv.Atoi(string(f[2]))
	}
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return ppid, pgrp, nil
}

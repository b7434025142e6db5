package sandbox

import (
	"bytes"
	"errors"
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
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	if ppid, pgrp, err = parseStat(b); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return ppid, pgrp, nil
}

// parseStat reads the parent and the process group from the text of /proc/PID/stat:
// "pid (comm) state ppid pgrp …", where comm, which a process sets as it likes, may
// hold spaces and parentheses: the fields start after the last ')'.
func parseStat(b []byte) (ppid, pgrp int, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, errors.New("no command name")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 {
		return 0, 0, errors.New("too few fields")
	}
	if ppid, err = strconv.Atoi(string(f[1])); err == nil {
		pgrp, err = strconv.Atoi(string(f[2]))
	}
	if err != nil || ppid < 0 || pgrp < 0 {
		return 0, 0, fmt.Errorf("parent and group %q %q", f[1], f[2])
	}
	return ppid, pgrp, nil
}

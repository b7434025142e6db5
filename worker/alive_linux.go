package worker

import (
	"os"
	"strconv"
)

// othersAlive reports whether a process of the session other than the worker still
// runs: anything in the pid namespace (level strict), or a child of the worker, which
// adopts orphans as a subreaper.
func othersAlive(namespace bool) bool {
	self := os.Getpid()
	if !namespace {
		return len(Children(self)) > 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !zombie(st) {
			return true
		}
	}
	return false
}

// zombie reports whether a /proc/PID/stat line says the process has ended.
func zombie(stat []byte) bool {
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' {
			return i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
		}
	}
	return false
}

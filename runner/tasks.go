package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/sandbox"
)

// ErrTasks is wrapped by the error of a run whose task limits cannot hold the workers
// of the sessions it would run at once: nothing runs (exit 2).
var ErrTasks = errors.New("task limit too low")

// The tasks (processes and threads) a run needs: tasksPerSession for each running
// session with a worker, 12 as measured by BenchmarkManySessions (the worker's two
// stages with their threads, bash and the command it runs), and tasksPerRun for the
// run's own threads.
const (
	tasksPerSession = 12
	tasksPerRun     = 64
)

// taskLimit is one limit on the tasks a run may start: what sets it, its value, how
// many it still leaves, and how to raise it (a format given the value that would do).
type taskLimit struct {
	name      string
	max, free int
	raise     string
}

// checkTasks refuses a run whose running sessions would not fit in the limits on new
// tasks, before any of them starts: a run that meets one midway fails its sessions'
// tool calls one by one with "resource temporarily unavailable" instead. Only
// sessions that start a worker count (those with tools, checks or MCP servers).
func checkTasks(concurrency int, sessions []jobs.Session) error {
	running := 0
	for _, s := range sessions {
		if len(s.Settings.Tools) > 0 || len(s.Checks) > 0 || len(s.Settings.MCPServers) > 0 {
			running++
		}
	}
	running = min(running, concurrency)
	if running == 0 {
		return nil
	}
	return tasksFit(running, taskLimits())
}

// tasksFit says which of limits leave too few tasks for running sessions with a worker
// each, and at what concurrency the run would fit.
func tasksFit(running int, limits []taskLimit) error {
	need := running*tasksPerSession + tasksPerRun
	fit := running
	var short []string
	for _, l := range limits {
		if l.free >= need {
			continue
		}
		raise := fmt.Sprintf(l.raise, l.max+need-l.free)
		short = append(short, fmt.Sprintf("%s is %d and leaves %d (%s)", l.name, l.max, max(l.free, 0), raise))
		fit = min(fit, max(0, (l.free-tasksPerRun)/tasksPerSession))
	}
	if len(short) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d sessions at once need about %d tasks (%d each for its worker and tools, %d for the run), "+
		"and %s; %s", ErrTasks, running, need, tasksPerSession, tasksPerRun, strings.Join(short, "; "), lowerConcurrency(fit, "them"))
}

// lowerConcurrency ends the refusal of a run whose limits hold fit sessions at once:
// the concurrency to lower to, or that none fits what limits names.
func lowerConcurrency(fit int, limits string) string {
	if fit > 0 {
		return fmt.Sprintf("or lower concurrency to %d", fit)
	}
	return "and no concurrency fits " + limits
}

// taskLimits are the limits on the tasks this process may start, each with what it
// leaves now: the kernel's pid_max and threads-max less the tasks that exist,
// RLIMIT_NPROC less the user's tasks (it does not hold for root), and each pids cgroup
// the process is in. A limit that cannot be read is left out.
func taskLimits() []taskLimit {
	var out []taskLimit
	if existing, ok := tasksNow(); ok {
		for _, k := range []struct{ name, sysctl string }{{"kernel.pid_max", "pid_max"}, {"kernel.threads-max", "threads-max"}} {
			if n, ok := readCount(filepath.Join("/proc/sys/kernel", k.sysctl)); ok {
				out = append(out, taskLimit{name: k.name, max: n, free: n - existing, raise: "sysctl -w " + k.name + "=%d as root"})
			}
		}
	}
	var l unix.Rlimit
	if os.Geteuid() != 0 && unix.Getrlimit(unix.RLIMIT_NPROC, &l) == nil && l.Cur != unix.RLIM_INFINITY {
		n := int(min(l.Cur, 1<<31))
		out = append(out, taskLimit{name: "RLIMIT_NPROC", max: n, free: n - userTasks(os.Getuid()),
			raise: "ulimit -u %d" + fmt.Sprintf(", up to the hard limit %d", l.Max)})
	}
	for _, p := range sandbox.PidsLimits() {
		out = append(out, taskLimit{name: "the pids.max of cgroup " + p.Dir, max: p.Max, free: p.Max - p.Current,
			raise: "raise it to %d: TasksMax= of its systemd unit, docker run --pids-limit, or the pod's pid limit"})
	}
	return out
}

// tasksNow is the number of tasks on the machine, the fourth field of /proc/loadavg
// after its slash ("1/139").
func tasksNow() (int, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	return parseLoadavgTasks(string(b))
}

// parseLoadavgTasks reads the number of existing tasks in a /proc/loadavg line.
func parseLoadavgTasks(text string) (int, bool) {
	f := strings.Fields(text)
	if len(f) < 4 {
		return 0, false
	}
	_, total, ok := strings.Cut(f[3], "/")
	n, err := strconv.Atoi(total)
	return n, ok && err == nil && n >= 0
}

// readCount reads a file that holds one non-negative number, as /proc/sys does.
func readCount(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil && n >= 0
}

// userTasks counts the tasks of the processes whose real user is uid, as far as /proc
// shows them.
func userTasks(uid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue // it has exited
		}
		if real, threads, ok := parseStatusTasks(string(b)); ok && real == uid {
			n += threads
		}
	}
	return n
}

// parseStatusTasks reads the real uid and the thread count of a /proc/PID/status.
func parseStatusTasks(text string) (uid, threads int, ok bool) {
	var haveUID, haveThreads bool
	for line := range strings.Lines(text) {
		name, value, found := strings.Cut(strings.TrimSpace(line), ":")
		if !found {
			continue
		}
		f := strings.Fields(value)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		switch name {
		case "Uid":
			uid, haveUID = n, true
		case "Threads":
			threads, haveThreads = n, true
		}
	}
	return uid, threads, haveUID && haveThreads
}

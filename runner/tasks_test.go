package runner

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTasksFit(t *testing.T) {
	t.Parallel()
	pidMax := taskLimit{name: "kernel.pid_max", max: 32768, free: 32600, raise: "sysctl -w kernel.pid_max=%d as root"}
	cgroup := taskLimit{name: "the pids.max of cgroup /sys/fs/cgroup/ci", max: 1000, free: 900,
		raise: "raise it to %d: TasksMax= of its systemd unit, docker run --pids-limit, or the pod's pid limit"}
	for name, tt := range map[string]struct {
		running int
		limits  []taskLimit
		want    []string // in the error; none: the run fits
		not     []string
	}{
		"no limits":             {running: 10000},
		"every limit has room":  {running: 50, limits: []taskLimit{pidMax, cgroup}},
		"exactly enough":        {running: 1, limits: []taskLimit{{name: "kernel.threads-max", max: 100, free: tasksPerSession + tasksPerRun, raise: "%d"}}},
		"one short":             {running: 1, limits: []taskLimit{{name: "kernel.threads-max", max: 100, free: tasksPerSession + tasksPerRun - 1, raise: "up to %d"}}, want: []string{"kernel.threads-max is 100 and leaves 75 (up to 101)", "; and no concurrency fits them"}},
		"the cgroup is too low": {running: 100, limits: []taskLimit{pidMax, cgroup}, want: []string{"task limit too low: 100 sessions at once need about 1264 tasks (12 each for its worker and tools, 64 for the run)", "the pids.max of cgroup /sys/fs/cgroup/ci is 1000 and leaves 900 (raise it to 1364: TasksMax=", "lower concurrency to 69"}, not: []string{"pid_max"}},
		"pid_max is too low": {running: 10000, limits: []taskLimit{pidMax}, want: []string{
			"10000 sessions at once need about 120064 tasks", "kernel.pid_max is 32768 and leaves 32600 (sysctl -w kernel.pid_max=120232 as root)", "lower concurrency to 2711",
		}},
		"both, the lower sets the concurrency": {running: 10000, limits: []taskLimit{pidMax, cgroup}, want: []string{"kernel.pid_max is 32768", "cgroup /sys/fs/cgroup/ci is 1000", "lower concurrency to 69"}},
		"no room at all":                       {running: 5, limits: []taskLimit{{name: "RLIMIT_NPROC", max: 50, free: -3, raise: "ulimit -u %d"}}, want: []string{"RLIMIT_NPROC is 50 and leaves 0 (ulimit -u 177)", "; and no concurrency fits them"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := tasksFit(tt.running, tt.limits)
			if len(tt.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrTasks)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			for _, n := range tt.not {
				assert.NotContains(t, err.Error(), n)
			}
		})
	}
}

func TestParseLoadavgTasks(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		in   string
		want int
		ok   bool
	}{
		"a line":              {in: "2.42 3.14 4.83 4/139 32673\n", want: 139, ok: true},
		"no slash":            {in: "2.42 3.14 4.83 139 32673\n"},
		"too few fields":      {in: "2.42 3.14\n"},
		"not a number":        {in: "0 0 0 1/x 1"},
		"negative":            {in: "0 0 0 1/-5 1"},
		"empty":               {in: ""},
		"without a last pid":  {in: "0.00 0.00 0.00 1/7", want: 7, ok: true},
		"spaces and newlines": {in: "  0.00 0.00 0.00   3/12   99  \n\n", want: 12, ok: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			n, ok := parseLoadavgTasks(tt.in)
			assert.Equal(t, tt.ok, ok)
			if tt.ok {
				assert.Equal(t, tt.want, n)
			}
		})
	}
}

func TestParseStatusTasks(t *testing.T) {
	t.Parallel()
	own, err := os.ReadFile("/proc/self/status")
	if err == nil {
		uid, threads, ok := parseStatusTasks(string(own))
		require.True(t, ok, "/proc/self/status:\n%s", own)
		assert.Equal(t, os.Getuid(), uid)
		assert.Positive(t, threads)
	}
	for name, tt := range map[string]struct {
		in           string
		uid, threads int
		ok           bool
	}{
		"real uid first": {in: "Name:\tsh\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\nThreads:\t3\n", uid: 1000, threads: 3, ok: true},
		"no threads":     {in: "Name:\tsh\nUid:\t1000\t1000\t1000\t1000\n"},
		"no uid":         {in: "Threads:\t3\n"},
		"garbled":        {in: "Uid:\tx\nThreads:\t\n"},
		"empty":          {in: ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			uid, threads, ok := parseStatusTasks(tt.in)
			assert.Equal(t, tt.ok, ok)
			if tt.ok {
				assert.Equal(t, tt.uid, uid)
				assert.Equal(t, tt.threads, threads)
			}
		})
	}
}

// TestTaskLimitsOfThisMachine reads the real limits: pid_max and threads-max are there
// on every Linux, each leaving no more than it allows.
func TestTaskLimitsOfThisMachine(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/sys/kernel/pid_max"); err != nil {
		t.Skip("no /proc/sys/kernel: not Linux")
	}
	var names []string
	for _, l := range taskLimits() {
		names = append(names, l.name)
		assert.LessOrEqual(t, l.free, l.max, l.name)
		assert.Contains(t, l.raise, "%d", l.name)
	}
	assert.Contains(t, names, "kernel.pid_max")
	assert.Contains(t, names, "kernel.threads-max")
}

// FuzzTaskFiles feeds the same text to the readers of /proc/loadavg and of
// /proc/PID/status: neither panics, and what they accept is what the text says.
func FuzzTaskFiles(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		if n, ok := parseLoadavgTasks(text); ok {
			assert.GreaterOrEqual(t, n, 0)
			assert.Contains(t, text, "/")
		}
		if uid, threads, ok := parseStatusTasks(text); ok {
			assert.Contains(t, text, strconv.Itoa(uid))
			assert.Contains(t, text, strconv.Itoa(threads))
		}
	})
}

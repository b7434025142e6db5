package runner_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/transport/scripted"
	"github.com/agentrun/agentrun/worker"
	"github.com/agentrun/agentrun/worker/workertest"
)

// manySessions scales BenchmarkManySessions: `go test -run '^$' -bench
// BenchmarkManySessions -benchtime 1x ./runner -args -sessions 10000`.
var manySessions = flag.Int("sessions", 1000, "sessions of BenchmarkManySessions, all at once")

// The most one session of BenchmarkManySessions was measured to hold: PSS (its worker's
// two stages and sleep, 2.6 MB with agentrun-worker) and tasks (processes and threads).
const (
	manyBytesPerSession = 3 << 20
	manyTasksPerSession = 12
)

// The many-sessions benchmark's shape: every session at once, a model that answers
// after manyLatency, one Bash call of manyTool in between.
const (
	manyLatency = time.Second
	manyTool    = 3 * time.Second
)

// BenchmarkManySessions runs -sessions sessions (10,000) at a concurrency of as many,
// against the scripted model behind loopback HTTP answering after 1 s: each session
// calls Bash (sleep 3) in its own worker at sandbox level strict, then waits on the
// model for its answer. The ideal run is 1 + 3 + 1 = 5 s. It reports the wall time
// over the ideal and the memory of every process the run started (workers, their
// stage 2, bash and sleep) and of the run's own process (which here also serves the
// model): PSS, the sum that counts a shared page once, and RSS, which counts it in
// every process. Targets: total memory ≤ 3 GB, wall ≤ 1.10 × ideal, one result per
// session.
func BenchmarkManySessions(b *testing.B) {
	if err := sandbox.Probe().Supports(sandbox.LevelStrict); err != nil {
		b.Skip(err)
	}
	n := *manySessions
	if err := roomFor(n, manyBytesPerSession, manyTasksPerSession); err != nil {
		b.Skip(err)
	}
	dir := b.TempDir()
	spec := writeSpec(b, dir, fmt.Sprintf(`version: 1
concurrency: %d
defaults:
  tools: [Bash]
  workspace: {dir: ., mode: shared}
  sandbox: {level: strict}
jobs:
  - {id: many, model: sleep3, repeat: %d, prompt: Sleep.}
`, n, n))
	p := newOverHTTPWith(b, scripted.Options{Scripts: loadScripts(b), FirstByte: manyLatency})
	ideal := 2*manyLatency + manyTool
	var wall, cpu, workers time.Duration
	var peak usage
	for i := range b.N {
		out := filepath.Join(dir, fmt.Sprint(i))
		r := newRunner(b, runner.Options{Out: out, Providers: p, Environ: os.Environ()})
		s := startProcSampler(os.Getpid(), time.Second)
		cpu0, workers0 := cpuTime(b)
		start := time.Now()
		sum, err := r.Run(context.Background(), spec)
		elapsed := time.Since(start)
		cpu1, workers1 := cpuTime(b)
		top := s.stop()
		cpu += cpu1 - cpu0
		workers += workers1 - workers0
		if err != nil {
			b.Fatal(err)
		}
		if len(sum.Sessions) != n || sum.Totals.Passed != n {
			b.Fatalf("%d results, %d passed of %d sessions: %v%s", len(sum.Sessions), sum.Totals.Passed, n, sum.Totals.ByStatus, failures(sum))
		}
		for _, row := range sum.Sessions {
			if d := time.Duration(row.DurationMS) * time.Millisecond; d < ideal {
				stream, _ := os.ReadFile(filepath.Join(out, runner.SessionsDir, row.Key, runner.StreamFile))
				b.Fatalf("%s took %s, less than the model's and the tool's %s: its Bash call did not sleep:\n%s", row.Key, d, ideal, stream)
			}
		}
		if err := oneResultEach(out, sum); err != nil {
			b.Fatal(err)
		}
		wall += elapsed
		peak = peak.max(top)
	}
	b.Logf("at the peak of PSS: %s", peak.breakdown())
	b.ReportMetric(float64(wall)/float64(b.N)/float64(ideal), "wall/ideal")
	b.ReportMetric(peak.pss/(1<<20), "total-PSS-MB")
	b.ReportMetric(peak.rss/(1<<20), "total-RSS-MB")
	b.ReportMetric(peak.selfPSS/(1<<20), "runner-PSS-MB")
	b.ReportMetric(peak.childPSS/(1<<20), "children-PSS-MB")
	// Per session with a worker at the peak: on a loaded machine not every session
	// has its worker at once.
	perSession := peak.childPSS / max(1, peak.withWorker)
	b.ReportMetric(perSession/1024, "children-PSS-KB/session")
	b.ReportMetric(peak.withWorker, "sessions-with-worker")
	b.ReportMetric((perSession*float64(n)+peak.selfPSS)/(1<<20), "projected-PSS-MB")
	b.ReportMetric(peak.procs, "peak-processes")
	runs := float64(b.N) * float64(n)
	// The runner's CPU includes the model's loopback server and the sampling.
	b.ReportMetric(float64(cpu.Microseconds())/runs/1000, "cpu-ms/session")
	b.ReportMetric(float64(workers.Microseconds())/runs/1000, "worker-cpu-ms/session")
	b.ReportMetric(peak.fds, "runner-fds")
	b.ReportMetric(peak.fds/float64(n), "runner-fds/session")
}

// roomFor says why this machine cannot hold n sessions of the benchmark at once, if
// it cannot: memory, tasks, or open files. As root it raises the open-files hard limit
// as far as the sessions need, as `ulimit -Hn` would; the run itself checks the rest.
func roomFor(n int, bytesEach uint64, tasksEach int) error {
	if avail, err := memAvailable(); err == nil && avail < uint64(n)*bytesEach {
		return fmt.Errorf("%d sessions need about %d MB and %d MB are available", n,
			uint64(n)*bytesEach>>20, avail>>20)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if max, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n*tasksEach > max {
			return fmt.Errorf("%d sessions need about %d tasks and kernel.pid_max is %d", n, n*tasksEach, max)
		}
	}
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err == nil && os.Getuid() == 0 {
		if need := uint64(n)*16 + 1024; l.Max < need {
			_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: need, Max: need}) // the run says if it still is too low
		}
	}
	return nil
}

// memAvailable is MemAvailable of /proc/meminfo in bytes.
func memAvailable() (uint64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no MemAvailable in /proc/meminfo")
}

// oneResultEach checks that every session of sum has one result.json and a stream
// that ends with its one result event.
func oneResultEach(out string, sum *runner.Summary) error {
	for _, row := range sum.Sessions {
		d := filepath.Join(out, runner.SessionsDir, row.Key)
		if _, err := os.Stat(filepath.Join(d, runner.ResultFile)); err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(d, runner.StreamFile))
		if err != nil {
			return err
		}
		if c := strings.Count(string(b), `{"type":"result"`); c != 1 {
			return fmt.Errorf("%s: %d result events", row.Key, c)
		}
	}
	return nil
}

// usage is the memory of a process tree at one moment, in bytes, and the runner's
// open files.
type usage struct {
	pss, rss, selfPSS, childPSS, procs, fds float64
	withWorker                              float64 // sessions with a worker: its serving process
	// kinds are the processes by command name (comm): how many, and their PSS.
	kinds map[string]kind
}

// kind is the processes of one command name.
type kind struct {
	n   int
	pss float64
}

// max keeps the larger of each figure, and the breakdown of the sample with the most
// PSS.
func (u usage) max(o usage) usage {
	kinds, with := u.kinds, u.withWorker
	if o.pss > u.pss {
		kinds, with = o.kinds, o.withWorker
	}
	return usage{max(u.pss, o.pss), max(u.rss, o.rss), max(u.selfPSS, o.selfPSS), max(u.childPSS, o.childPSS),
		max(u.procs, o.procs), max(u.fds, o.fds), with, kinds}
}

// breakdown says what each kind of process held.
func (u usage) breakdown() string {
	var parts []string
	for name, k := range u.kinds {
		parts = append(parts, fmt.Sprintf("%s: %d processes, %.0f MB PSS (%.0f KB each)", name, k.n, k.pss/(1<<20), k.pss/float64(k.n)/1024))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// procSampler measures the process tree of root every interval and keeps the peaks.
type procSampler struct {
	root int
	done chan struct{}
	wg   sync.WaitGroup
	peak usage
}

func startProcSampler(root int, every time.Duration) *procSampler {
	s := &procSampler{root: root, done: make(chan struct{})}
	s.wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.peak = s.peak.max(treeUsage(root))
			}
		}
	})
	return s
}

// stop ends the sampling and returns the peaks.
func (s *procSampler) stop() usage {
	close(s.done)
	s.wg.Wait()
	return s.peak
}

// treeUsage sums the memory of root and all its descendants (found through
// /proc/PID/task/TID/children): PSS from smaps_rollup, RSS from statm.
func treeUsage(root int) usage {
	u := usage{kinds: map[string]kind{}}
	page := float64(os.Getpagesize())
	for _, pid := range descendants(root) {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			continue // it has exited
		}
		pss := float64(smapsPSS(pid))
		var rss float64
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid)); err == nil {
			if f := strings.Fields(string(b)); len(f) > 1 {
				v, _ := strconv.ParseFloat(f[1], 64)
				rss = v * page
			}
		}
		u.pss += pss
		u.rss += rss
		u.procs++
		name := strings.TrimSpace(string(comm))
		argv, _ := workertest.Cmdline(pid)
		switch {
		case pid == root:
			name = "runner (" + name + ")"
		case len(argv) > 1 && argv[0] == "floorstage" && argv[1] == "stage":
			name = floorStageKind
		case len(argv) < 2 || argv[1] != worker.Command:
		case len(argv) == 2:
			name = "worker stage 1, staying for the network bridge"
		case argv[2] == "serve":
			name = "worker, serving (stage 2)"
			u.withWorker++ // one to a session, whether stage 1 stayed or became it
		case argv[2] == "spawn":
			name = "worker spawner"
		}
		k := u.kinds[name]
		k.n++
		k.pss += pss
		u.kinds[name] = k
		if pid == root {
			u.selfPSS = pss
		} else {
			u.childPSS += pss
		}
	}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", root)); err == nil {
		u.fds = float64(len(ents))
	}
	return u
}

// floorStageKind names the waiting processes of bench/floorstage in a usage.
const floorStageKind = "floor stage"

// descendants lists root and every process below it.
func descendants(root int) []int {
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, worker.Children(out[i])...)
	}
	return out
}

// smapsPSS is the proportional set size of pid in bytes, 0 when it has exited.
func smapsPSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if errors.Is(err, os.ErrNotExist) || err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// failures lists the first few failed sessions of sum with their errors, one a line.
func failures(sum *runner.Summary) string {
	var b strings.Builder
	shown := 0
	for _, row := range sum.Sessions {
		if row.Error == nil || shown == 5 {
			continue
		}
		shown++
		fmt.Fprintf(&b, "\n%s: %s: %s", row.Key, row.Error.Kind, row.Error.Message)
	}
	return b.String()
}

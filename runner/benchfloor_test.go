package runner_test

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/testbuild"
)

// What one call of BenchmarkManySessionsFloor holds: sleep, which bash became (110 KB
// of PSS at 1,000 calls), and its task.
const (
	floorBytesPerCall = 256 << 10
	floorTasksPerCall = 2
)

// BenchmarkManySessionsFloor is what BenchmarkManySessions costs this machine without
// agentrun: the same -sessions Bash calls (`bash -c 'sleep 3'`), started all at once by
// a bare launcher (one goroutine per core calling os/exec; no sandbox, no model, no
// files, no sampling) and waited for. The ideal is the tool's 3 s. Its wall time over
// the ideal, and the CPU each call costs the kernel and bash, bound from below what
// any runner that gives each session a real Bash call can reach on this machine. It
// also reports the full benchmark's wall / ideal at best: the model's two seconds
// added to the launcher's wall time. Then it measures the memory floor of a session
// whose tools run in a process of its own written in Go: -sessions minimal static Go
// programs (bench/floorstage), started at once in the namespaces of a strict worker,
// each waiting out the tool's time; it reports the PSS of one at the peak.
func BenchmarkManySessionsFloor(b *testing.B) {
	n := *manySessions
	if err := roomFor(n, floorBytesPerCall, floorTasksPerCall); err != nil {
		b.Skip(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip(err)
	}
	var wall, cpu time.Duration
	for range b.N {
		self0, children0 := cpuTime(b)
		start := time.Now()
		if err := launchAll(bash, n); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		self1, children1 := cpuTime(b)
		cpu += self1 - self0 + children1 - children0
	}
	runs := float64(b.N) * float64(n)
	b.StopTimer()
	goFloor := goMemoryFloor(b, n)
	b.ReportMetric(goFloor/1024, "go-floor-PSS-KB/process")
	b.ReportMetric(float64(wall)/float64(b.N)/float64(manyTool), "wall/ideal")
	b.ReportMetric((float64(wall)/float64(b.N)+float64(2*manyLatency))/float64(2*manyLatency+manyTool), "full-wall/ideal")
	b.ReportMetric(float64(cpu.Microseconds())/runs/1000, "cpu-ms/call")
}

// goMemoryFloor starts n minimal static Go programs at once, in the namespaces of a
// strict worker where this machine has them, each waiting out manyTool, and returns
// the PSS of one at the peak, in bytes.
func goMemoryFloor(b *testing.B, n int) float64 {
	bin := floorStage.Path(b, "floorstage")
	flags := "0"
	if sandbox.Probe().Supports(sandbox.LevelStrict) == nil {
		flags = strconv.FormatUint(uint64(sandbox.SysProcAttr(sandbox.LevelStrict).Cloneflags), 10)
	}
	s := startProcSampler(os.Getpid(), 500*time.Millisecond)
	out, err := exec.Command(bin, "launch", strconv.Itoa(n), strconv.Itoa(n), manyTool.String(), flags, "1").CombinedOutput()
	top := s.stop()
	if err != nil {
		b.Fatalf("floorstage: %v: %s", err, out)
	}
	k := top.kinds[floorStageKind]
	if k.n == 0 {
		b.Fatal("no floor stage was alive when memory was sampled")
	}
	b.Logf("memory floor: %d minimal Go programs at the peak, %.0f KB of PSS each", k.n, k.pss/float64(k.n)/1024)
	return k.pss / float64(k.n)
}

// launchAll starts n `bash -c 'sleep 3'` from one goroutine per core and waits for
// them all; the first error to start one is returned after the started ones have ended.
func launchAll(bash string, n int) error {
	cmds := make([]*exec.Cmd, n)
	errs := make([]error, n)
	var started sync.WaitGroup
	starters := runtime.NumCPU()
	for w := range starters {
		started.Go(func() {
			for i := w; i < n; i += starters {
				cmds[i] = exec.Command(bash, "-c", "sleep "+manyTool.String())
				errs[i] = cmds[i].Start()
			}
		})
	}
	started.Wait()
	var done sync.WaitGroup
	for i, c := range cmds {
		if errs[i] == nil {
			done.Go(func() { errs[i] = c.Wait() })
		}
	}
	done.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// floorStage is bench/floorstage, static as the release's worker is.
var floorStage = testbuild.New("floorstage", testbuild.Cmd{File: "floorstage",
	Args: []string{"build", "../bench/floorstage"}, Env: []string{"CGO_ENABLED=0"}})

// BenchmarkRun1000Floor is BenchmarkRun1000's processes without agentrun: for each of
// the 1,000 sessions, 100 at a time, a minimal static Go program started in the
// namespaces the level's worker gets (sandbox.SysProcAttr), which execs itself again
// for each further stage; the last waits out the session's model time (4 × 50 ms) and
// exits. No files, no model, no tools, no confinement. A session's worker is two such
// starts (stages=2: stage 1 execs stage 2), so the wall / ideal this reaches, and its
// CPU per session, bound from below what BenchmarkRun1000 can reach on this machine;
// stages=1 is the bound for a worker of one Go start.
func BenchmarkRun1000Floor(b *testing.B) {
	for _, level := range sandbox.Levels {
		for _, stages := range []int{2, 1} {
			b.Run(string(level)+"/stages="+strconv.Itoa(stages), func(b *testing.B) {
				if err := sandbox.Probe().Supports(level); err != nil {
					b.Skip(err)
				}
				benchmarkFloor(b, level, stages)
			})
		}
	}
}

func benchmarkFloor(b *testing.B, level sandbox.Level, stages int) {
	const sessions = 1000
	bin := floorStage.Path(b, "floorstage")
	flags := strconv.FormatUint(uint64(sandbox.SysProcAttr(level).Cloneflags), 10)
	model := time.Duration(benchSteps) * benchLatency
	var wall, cpu time.Duration
	for range b.N {
		_, children0 := cpuTime(b)
		start := time.Now()
		out, err := exec.Command(bin, "launch", strconv.Itoa(sessions), strconv.Itoa(benchConcurrency),
			model.String(), flags, strconv.Itoa(stages)).CombinedOutput()
		wall += time.Since(start)
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		_, children1 := cpuTime(b)
		cpu += children1 - children0
	}
	ideal := time.Duration((sessions+benchConcurrency-1)/benchConcurrency) * model
	b.ReportMetric(float64(wall)/float64(b.N)/float64(ideal), "wall/ideal")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/sessions/1000, "cpu-ms/session")
}

package runner_test

import (
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"
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
// added to the launcher's wall time.
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
	b.ReportMetric(float64(wall)/float64(b.N)/float64(manyTool), "wall/ideal")
	b.ReportMetric((float64(wall)/float64(b.N)+float64(2*manyLatency))/float64(2*manyLatency+manyTool), "full-wall/ideal")
	b.ReportMetric(float64(cpu.Microseconds())/runs/1000, "cpu-ms/call")
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

package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/transport/scripted"
)

// The benchmark's shape: sessions of benchSteps model calls, each call answered after
// benchLatency, run benchConcurrency at a time. A perfect runner takes
// ceil(sessions/concurrency) × steps × latency.
const (
	benchConcurrency = 100
	benchSteps       = 4
	benchLatency     = 50 * time.Millisecond
)

// oneModel serves every session from one in-process scripted model.
type oneModel struct{ m *scripted.Model }

func (p oneModel) Provider(s jobs.Session, _ runner.Liveness) (agent.Provider, runner.ProviderInfo, error) {
	return p.m, runner.ProviderInfo{Name: "scripted", Model: s.Settings.Model}, nil
}

// BenchmarkRun1000 runs 1,000 sessions of 4 turns (Write, Read, Edit, answer) with 50 ms
// of model latency per call, 100 at a time: 10 waves × 4 × 50 ms = 2 s at best. The
// targets are a wall/ideal ratio of 1.10 or less and under 2 MB per running session.
// One sub-benchmark per sandbox level: every session's tool calls go through its own
// worker (this test binary), which starts at the first call and ends with the session.
func BenchmarkRun1000(b *testing.B) { benchmarkLevels(b, 1000) }

// BenchmarkRun100 is one wave of the same sessions, for quick iterations.
func BenchmarkRun100(b *testing.B) { benchmarkLevels(b, 100) }

func benchmarkLevels(b *testing.B, sessions int) {
	for _, level := range sandbox.Levels {
		b.Run(string(level), func(b *testing.B) {
			if err := sandbox.Probe().Supports(level); err != nil {
				b.Skip(err)
			}
			benchmarkRun(b, sessions, level)
		})
	}
}

func benchmarkRun(b *testing.B, sessions int, level sandbox.Level) {
	script := loadScripts(b)["bench"]
	if len(script.Steps) != benchSteps {
		b.Fatalf("the bench script has %d steps, want %d", len(script.Steps), benchSteps)
	}
	// Each session works in its own copy of an empty folder.
	specDir := b.TempDir()
	if err := os.Mkdir(filepath.Join(specDir, "ws"), 0o755); err != nil {
		b.Fatal(err)
	}
	spec := writeSpec(b, specDir, fmt.Sprintf(`version: 1
concurrency: %d
defaults:
  tools: [Read, Write, Edit]
  workspace: {dir: ws, mode: copy}
  sandbox: {level: "%s"}
jobs:
  - {id: bench, model: bench, repeat: %d, prompt: Change beta to BETA in bench.txt.}
`, benchConcurrency, level, sessions))
	model := scripted.New(scripted.Options{Default: script, FirstByte: benchLatency})
	waves := (sessions + benchConcurrency - 1) / benchConcurrency
	ideal := time.Duration(waves*benchSteps) * benchLatency

	var wall, cpu, workers time.Duration
	var allocs, bytes, peak uint64
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		out := filepath.Join(b.TempDir(), fmt.Sprint(i))
		r := newRunner(b, runner.Options{Out: out, Providers: oneModel{model}})
		runtime.GC()
		base := heapObjects()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		cpu0, workers0 := cpuTime(b)
		sampler := startHeapSampler()
		b.StartTimer()

		start := time.Now()
		sum, err := r.Run(context.Background(), spec)
		elapsed := time.Since(start)

		b.StopTimer()
		top := sampler.stop()
		cpu1, workers1 := cpuTime(b)
		cpu += cpu1 - cpu0
		workers += workers1 - workers0
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if err != nil {
			b.Fatal(err)
		}
		if sum.Totals.Passed != sessions || sum.Totals.Usage.Output == 0 {
			b.Fatalf("%d of %d sessions passed: %v", sum.Totals.Passed, sessions, sum.Totals.ByStatus)
		}
		for _, row := range sum.Sessions[:1] {
			if row.NumTurns != benchSteps || row.Status != protocol.StatusSuccess {
				b.Fatalf("%s: %s after %d turns", row.Key, row.Status, row.NumTurns)
			}
		}
		// A failed tool call is only an error result the scripted model ignores: the
		// files are the proof that every session's tools ran.
		edited, _ := filepath.Glob(filepath.Join(out, runner.WorkspacesDir, "*", "bench.txt"))
		for _, f := range edited {
			if data, err := os.ReadFile(f); err != nil || !strings.Contains(string(data), "BETA") {
				b.Fatalf("%s: the Edit did not happen", f)
			}
		}
		if len(edited) != sessions {
			b.Fatalf("%d of %d sessions wrote bench.txt: their tool calls failed", len(edited), sessions)
		}
		wall += elapsed
		allocs += after.Mallocs - before.Mallocs
		bytes += after.TotalAlloc - before.TotalAlloc
		peak = max(peak, top-min(top, base))
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N)
	perSession := n * float64(sessions)
	b.ReportMetric(float64(wall)/n/float64(ideal), "wall/ideal")
	b.ReportMetric(float64(peak)/benchConcurrency/(1<<20), "MB/running-session")
	b.ReportMetric(float64(allocs)/perSession, "allocs/session")
	b.ReportMetric(float64(bytes)/perSession, "B/session")
	b.ReportMetric(float64(cpu.Microseconds())/perSession/1000, "cpu-ms/session")
	b.ReportMetric(float64(workers.Microseconds())/perSession/1000, "worker-cpu-ms/session")
	// No run can end before its CPU time, spread over every core, has passed: the wall /
	// ideal of a run that did nothing but wait and compute.
	b.ReportMetric(max(1, float64(cpu+workers)/n/float64(runtime.NumCPU())/float64(ideal)), "cpu-floor-wall/ideal")
}

// heapObjects is the heap memory in live and not yet swept objects.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapSampler records the highest heapObjects value seen while it runs.
type heapSampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak uint64
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{done: make(chan struct{}), peak: heapObjects()}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-t.C:
				h.peak = max(h.peak, heapObjects())
			}
		}
	}()
	return h
}

// stop ends the sampling and returns the peak.
func (h *heapSampler) stop() uint64 {
	close(h.done)
	h.wg.Wait()
	return max(h.peak, heapObjects())
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime(b *testing.B) (self, children time.Duration) {
	var ru, rc syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &rc); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(rc.Utime.Nano() + rc.Stime.Nano())
}

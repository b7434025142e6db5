package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/transport/scripted"
)

// The shape of runner's BenchmarkRun1000: sessions of runSteps model calls (Write,
// Read, Edit, answer), each answered after runLatency, runConcurrency at a time. A
// perfect runner takes ceil(sessions/concurrency) × steps × latency: 2 s.
const (
	runSessions    = 1000
	runConcurrency = 100
	runSteps       = 4
	runLatency     = 50 * time.Millisecond
)

type oneModel struct{ m *scripted.Model }

func (p oneModel) Provider(s jobs.Session, _ func()) (agent.Provider, runner.ProviderInfo, error) {
	return p.m, runner.ProviderInfo{Name: "scripted", Model: s.Settings.Model}, nil
}

// BenchmarkRunSandbox is runner's BenchmarkRun1000 at a given sandbox level: every
// session's three tool calls go through its own worker (this test binary, started by
// the runner), which starts at the first call and ends with the session.
func BenchmarkRunSandbox(b *testing.B) {
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock, sandbox.LevelOff} {
		b.Run(string(level), func(b *testing.B) { benchmarkRunLevel(b, level) })
	}
}

func benchmarkRunLevel(b *testing.B, level sandbox.Level) {
	if err := sandbox.Probe().Supports(level); err != nil {
		b.Skipf("this machine cannot run level %s: %v", level, err)
	}
	script, err := scripted.LoadScript(filepath.Join("..", "runner", "testdata", "scripts", "bench.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	if len(script.Steps) != runSteps {
		b.Fatalf("the bench script has %d steps, want %d", len(script.Steps), runSteps)
	}
	specDir := b.TempDir()
	if err := os.Mkdir(filepath.Join(specDir, "ws"), 0o755); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(specDir, "jobs.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, `version: 1
concurrency: %d
defaults:
  tools: [Read, Write, Edit]
  workspace: {dir: ws, mode: copy}
  sandbox: {level: %s}
jobs:
  - {id: bench, model: bench, repeat: %d, prompt: Change beta to BETA in bench.txt.}
`, runConcurrency, level, runSessions), 0o644); err != nil {
		b.Fatal(err)
	}
	spec, err := jobs.Load(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	model := scripted.New(scripted.Options{Default: script, FirstByte: runLatency})
	waves := (runSessions + runConcurrency - 1) / runConcurrency
	ideal := time.Duration(waves*runSteps) * runLatency
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var wall, cpu, workers time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		out := filepath.Join(b.TempDir(), fmt.Sprint(i))
		r := runner.New(runner.Options{Out: out, Providers: oneModel{model},
			Sandbox: runner.SandboxOptions{Binary: self}})
		cpu0, workers0 := cpuTimes(b)
		b.StartTimer()
		start := time.Now()
		sum, err := r.Run(context.Background(), spec)
		elapsed := time.Since(start)
		b.StopTimer()
		cpu1, workers1 := cpuTimes(b)
		if err != nil {
			b.Fatal(err)
		}
		if sum.Totals.Passed != runSessions {
			b.Fatalf("%d of %d sessions passed: %v", sum.Totals.Passed, runSessions, sum.Totals.ByStatus)
		}
		for _, row := range sum.Sessions {
			if row.NumTurns != runSteps {
				b.Fatalf("%s: %s after %d turns", row.Key, row.Status, row.NumTurns)
			}
		}
		checkEdited(b, out)
		wall += elapsed
		cpu += cpu1 - cpu0
		workers += workers1 - workers0
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(wall)/n/float64(ideal), "wall/ideal")
	b.ReportMetric(float64(cpu.Microseconds())/n/runSessions/1000, "cpu-ms/session")
	b.ReportMetric(float64(workers.Microseconds())/n/runSessions/1000, "worker-cpu-ms/session")
}

// checkEdited fails b unless every session's tools ran: a failed tool call is only an
// error result for the model, which the scripted one ignores.
func checkEdited(b *testing.B, out string) {
	b.Helper()
	files, err := filepath.Glob(filepath.Join(out, runner.WorkspacesDir, "*", "bench.txt"))
	if err != nil {
		b.Fatal(err)
	}
	if len(files) != runSessions {
		b.Fatalf("%d of %d sessions wrote bench.txt: their tool calls failed", len(files), runSessions)
	}
	for _, f := range files {
		if got, err := os.ReadFile(f); err != nil || string(got) != "alpha\nBETA\ngamma\n" {
			b.Fatalf("%s: %q, %v: the session's Edit did not run", f, got, err)
		}
	}
}

// cpuTimes is the user and system CPU time of this process so far, and of its
// children that have been waited for (the workers, and what they reaped).
func cpuTimes(b *testing.B) (self, children time.Duration) {
	var ru, rc syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &rc); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(rc.Utime.Nano() + rc.Stime.Nano())
}

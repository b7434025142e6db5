package worker_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/worker"
	"github.com/agentrun/agentrun/worker/workertest"
)

// benchLevels are the levels every worker benchmark runs at, as sub-benchmarks.
var benchLevels = []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock, sandbox.LevelOff}

// benchConfig is the config of a session's worker on a fresh workspace holding
// small.txt, as newClient makes it, with an idle exit that never comes during a run.
func benchConfig(b *testing.B, level sandbox.Level) worker.Config {
	b.Helper()
	if err := sandbox.Probe().Supports(level); err != nil {
		b.Skipf("this machine cannot run level %s: %v", level, err)
	}
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "small.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	m, err := sandbox.ParseMode("0467")
	if err != nil {
		b.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	cfg := worker.Config{
		Spec:     sandbox.Spec{Level: level, Mode: m, Workspace: ws, Home: home, RootOnly: sandbox.RootOnly()}, // as the runner does
		Env:      []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8"},
		BashMode: "0467", Timeout: time.Minute, IdleExit: time.Hour,
	}
	cfg.Hidden = cfg.Spec.Hidden()
	if level == sandbox.LevelLandlock {
		// As the runner does: a private TMPDIR the tools may write.
		cfg.Spec.TempDir = b.TempDir()
	}
	// Spec.External stays unset, as the runner leaves it: New looks it up per client.
	return cfg
}

func readInput(b *testing.B, ws string) json.RawMessage {
	b.Helper()
	in, err := json.Marshal(map[string]string{"path": filepath.Join(ws, "small.txt")})
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// durations collects the time of each op and reports its percentiles.
type durations []time.Duration

func (d durations) report(b *testing.B, scale time.Duration, unit string) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	at := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))]) / float64(scale) }
	b.ReportMetric(at(0.50), "p50-"+unit)
	b.ReportMetric(at(0.99), "p99-"+unit)
}

// BenchmarkToolRoundTrip is one tool call through a started worker: the request
// framed on the pipe, the tool run in the confined worker, the result back.
//
//	read: a Read of a 17-byte file in the workspace, the runner's floor.
//	bash_true: a Bash call of `true`, dominated by bash's own start.
func BenchmarkToolRoundTrip(b *testing.B) {
	for _, level := range benchLevels {
		b.Run(string(level), func(b *testing.B) {
			cfg := benchConfig(b, level)
			c := worker.New(cfg, workertest.Bin(b), nil)
			defer func() {
				if err := c.Close(); err != nil {
					b.Error(err)
				}
			}()
			read := readInput(b, cfg.Spec.Workspace)
			bashTrue, _ := json.Marshal(map[string]string{"command": "true"})
			ctx := context.Background()
			// The worker starts here, outside the timed calls.
			if r := c.RunTool(ctx, "Read", read); r.IsError {
				b.Fatalf("Read: %s", r.Content)
			}
			for _, tc := range []struct {
				name, tool string
				input      json.RawMessage
			}{{"read", "Read", read}, {"bash_true", "Bash", bashTrue}} {
				b.Run(tc.name, func(b *testing.B) {
					b.ReportAllocs()
					var d durations
					for b.Loop() {
						t0 := time.Now()
						r := c.RunTool(ctx, tc.tool, tc.input)
						d = append(d, time.Since(t0))
						if r.IsError {
							b.Fatalf("%s: %s", tc.tool, r.Content)
						}
					}
					d.report(b, time.Microsecond, "µs")
				})
			}
			if c.Starts() != 1 {
				b.Errorf("the worker started %d times, want once", c.Starts())
			}
		})
	}
}

// BenchmarkSandboxStart is a session's sandbox from nothing: a new client, whose first
// call (a Read) starts the worker (agentrun-worker as the release builds it, executed
// twice, the root built at level strict, the process confined), then Close, which
// waits for the worker's exit. The tool round trips run in the same binary.
func BenchmarkSandboxStart(b *testing.B) {
	bin := workertest.Bin(b)
	for _, level := range benchLevels {
		b.Run(string(level), func(b *testing.B) {
			cfg := benchConfig(b, level)
			read := readInput(b, cfg.Spec.Workspace)
			ctx := context.Background()
			b.ReportAllocs()
			var d, first, closing durations
			for b.Loop() {
				t0 := time.Now()
				c := worker.New(cfg, bin, nil)
				r := c.RunTool(ctx, "Read", read)
				t1 := time.Now()
				err := c.Close()
				d = append(d, time.Since(t0))
				first = append(first, t1.Sub(t0))
				closing = append(closing, time.Since(t1))
				if r.IsError {
					b.Fatalf("Read: %s", r.Content)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			var total time.Duration
			for _, x := range d {
				total += x
			}
			b.ReportMetric(float64(total)/float64(len(d))/1e6, "ms/op")
			d.report(b, time.Millisecond, "ms")
			// Up to the first result: what a session waits for before its first tool
			// call returns; Close is off its path when the session ends.
			first.report(b, time.Millisecond, "ms-to-first-result")
			closing.report(b, time.Millisecond, "ms-close")
		})
	}
}

// BenchmarkExternalDirs is the look-up New makes for every client whose spec leaves
// External unset (the runner's case).
func BenchmarkExternalDirs(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = sandbox.ExternalDirs()
	}
}

// BenchmarkProbe is what this machine allows, as the runner asks once per run.
func BenchmarkProbe(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = sandbox.Probe()
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/transporttest"
)

type runawayProviders struct{ url string }

func (p runawayProviders) Provider(s jobs.Session, live runner.Liveness) (agent.Provider, runner.ProviderInfo, error) {
	c := transport.NewClient(anthropic.New(anthropic.Config{BaseURL: p.url}), transport.Options{Activity: live.Activity, IdleTimeout: live.Idle})
	return c, runner.ProviderInfo{Name: "anthropic", Model: s.Settings.Model}, nil
}

// BenchmarkRunaway runs one session, default limits, against a loopback endpoint whose
// answer is 200 MB of text (or a 50 MB tool input) in real SSE, and reports the peak
// resident memory above the baseline before the session (VmHWM after clear_refs):
// the target is under 64 MB. The garbage collector runs at the binary's setting.
func BenchmarkRunaway(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(runnerGOGC)) // what the binary does
	for _, tt := range []struct {
		name string
		ra   transporttest.Runaway
	}{
		{"text_200MB", transporttest.Runaway{Size: 200 << 20}},
		{"tool_input_50MB", transporttest.Runaway{Size: 50 << 20, Tool: true}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			srv := httptest.NewServer(tt.ra)
			b.Cleanup(srv.Close)
			dir := b.TempDir()
			path := filepath.Join(dir, "jobs.yaml")
			if err := os.WriteFile(path, []byte("version: 1\ndefaults: {tools: [Bash], sandbox: {level: \"off\"}}\njobs:\n  - {id: runaway, prompt: go}\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			spec, err := jobs.Load(path, nil)
			if err != nil {
				b.Fatal(err)
			}
			var peak float64
			for i := range b.N {
				runtime.GC()
				debug.FreeOSMemory()
				base := procStatus(b, "VmRSS")
				if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
					b.Skipf("cannot reset the peak RSS: %v", err)
				}
				sum, err := runner.New(runner.Options{Out: filepath.Join(dir, fmt.Sprint("out", i)), Providers: runawayProviders{srv.URL}}).
					Run(context.Background(), spec)
				if err != nil {
					b.Fatal(err)
				}
				if st := sum.Sessions[0].Status; st != "error_max_tokens" {
					b.Fatalf("status %s, want error_max_tokens", st)
				}
				peak = max(peak, float64(procStatus(b, "VmHWM")-base)/(1<<20))
			}
			b.ReportMetric(peak, "MB-above-baseline")
		})
	}
}

// procStatus reads a kB figure of /proc/self/status, in bytes.
func procStatus(b *testing.B, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status: %v", err)
	}
	for line := range bytes.Lines(data) {
		if v, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

package mcpclient_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/mcpclient"
	"github.com/agentrun/agentrun/mcpclient/mcptest"
	"github.com/agentrun/agentrun/sandbox"
)

// BenchmarkMCPCall measures one call of the test server's echo tool: with the SDK's
// client and server in one process (its in-memory transport), through a Set to the
// stdio server in the session's worker at each sandbox level (the relay over the
// worker's pipe, the server a process of its own), and to the streamable-HTTP server
// on loopback. It reports the median and the 99th percentile.
func BenchmarkMCPCall(b *testing.B) {
	input := json.RawMessage(`{"text":"ping"}`)
	b.Run("in-process", func(b *testing.B) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := mcptest.NewServer().Connect(b.Context(), st, nil)
		require.NoError(b, err)
		defer func() { _ = ss.Close() }()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), ct, nil)
		require.NoError(b, err)
		defer func() { _ = cs.Close() }()
		measure(b, func() {
			res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "echo", Arguments: input})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		})
	})
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock, sandbox.LevelOff} {
		b.Run("stdio/"+string(level), func(b *testing.B) {
			h := newHarnessAt(b, level)
			s := h.connect(h.stdio("test", "ok"))
			benchSet(b, s, "mcp__test__echo", input)
		})
	}
	b.Run("http", func(b *testing.B) {
		srv := mcptest.HTTP("")
		b.Cleanup(srv.Close) // after the set's own cleanup, which closes its streams
		h := &harness{t: b}
		s := h.connect(mcpclient.Config{Name: "web", URL: srv.URL + "/mcp", StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second})
		benchSet(b, s, "mcp__web__echo", input)
	})
}

func benchSet(b *testing.B, s *mcpclient.Set, tool string, input json.RawMessage) {
	measure(b, func() {
		if r := s.Call(b.Context(), tool, input); r.IsError {
			b.Fatal(r.Content)
		}
	})
}

// measure runs op b.N times and reports the median and the 99th percentile in µs.
func measure(b *testing.B, op func()) {
	op() // warm: the first call of a connection is not the steady state
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		op()
		d = append(d, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(d)
	at := func(q float64) float64 { return float64(d[min(len(d)-1, int(q*float64(len(d))))].Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

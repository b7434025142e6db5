package runner

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
)

// FuzzReportPage lays out report.html for any summary.json: it never panics, and a
// summary that does not decode has its error placed in the file. (The sessions' details
// come from files the runner wrote, read by the fuzzed EventReader and encoding/json;
// TestReportMissingFolder covers a folder that is gone.)
func FuzzReportPage(f *testing.F) {
	cost := 0.25
	seed := Summary{Spec: "a.yaml", StartedAt: "2026-01-02T03:04:05Z", Warnings: []string{"<b>w</b>"}, Sessions: []Row{
		{Key: "a.r1", JobID: "a", Provenance: protocol.Provenance{Provider: "p", Model: "m", Repeat: 1}, Status: protocol.StatusSuccess,
			DurationMS: 1200, CostUSD: &cost, NumTurns: 2},
		{Key: "a.r2", JobID: "a", Provenance: protocol.Provenance{Provider: "p", Model: "m", Repeat: 2}, Status: protocol.StatusChecks,
			DurationMS: -5, Error: &protocol.Error{Kind: "checks", Message: "failed checks: x"}, Checks: []CheckRow{{Name: "x"}}, Sandbox: "off"},
		{Key: "b", JobID: "b", Status: protocol.StatusProvider, DurationMS: 1 << 62, SessionDir: "../elsewhere/b"},
	}}
	b, err := json.Marshal(seed)
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte(`{"sessions": [{"key": "x", "duration_ms": 9223372036854775807, "cost_usd": -1e308}]}`))
	f.Add([]byte(`{"sessions": [{"key": 3}]}`))
	f.Add([]byte("{\n  \"spec\": \"a\",\n  oops"))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var sum Summary
		if err := json.Unmarshal(data, &sum); err != nil {
			_ = jsonPlace(data, err)
			return
		}
		sum.total()
		page, err := layoutReport(&sum)
		require.NoError(t, err)
		assert.Len(t, page.Rows, len(sum.Sessions))
		for _, c := range page.Charts {
			for _, r := range c.Rects {
				assert.False(t, math.IsNaN(r.W) || math.IsInf(r.W, 0) || r.W < 0, "%s: bar width %v", c.Title, r.W)
			}
		}
	})
}

func TestJSONPlace(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		data, want string
	}{
		"syntax, first line": {`{"a" 1}`, "line 1, column 6: "},
		"syntax, third line": {"{\n \"a\": 1,\n  x}", "line 3, column 3: "},
		"type":               {"{\"spec\":\n 12}", "line 2, column 3: "},
		"unexpected end":     {`{"a": `, "line 1, column 6: "},
		"empty":              {"", "line 1, column 1: "},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var s Summary
			err := json.Unmarshal([]byte(tt.data), &s)
			require.Error(t, err)
			assert.Equal(t, tt.want, jsonPlace([]byte(tt.data), err))
		})
	}
}

// TestDurationChart checks the histogram's bins: round widths, as many as the longest
// session needs, and sessions of no or a negative duration in the first.
func TestDurationChart(t *testing.T) {
	t.Parallel()
	rows := func(ms ...int64) []Row {
		var out []Row
		for i, d := range ms {
			st := protocol.StatusSuccess
			if i%2 == 1 {
				st = protocol.StatusChecks
			}
			out = append(out, Row{DurationMS: d, Status: st})
		}
		return out
	}
	tests := map[string]struct {
		rows      []Row
		wantBars  int
		wantTicks []string
	}{
		"none":               {rows: nil, wantBars: 0},
		"all instant":        {rows: rows(0, 0, -3), wantBars: 2, wantTicks: []string{"0s", "0s", "1ms"}},
		"up to 10.5 seconds": {rows: rows(1500, 10500, 4000, 4100), wantBars: 4, wantTicks: []string{"0s", "5s", "11s"}},
		"one long session":   {rows: rows(1 << 40), wantBars: 1},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := durationChart(tt.rows)
			if tt.rows == nil {
				assert.Equal(t, "no sessions", c.Empty)
				return
			}
			assert.Len(t, c.Rects, tt.wantBars)
			var ticks []string
			for _, tx := range c.Texts {
				if tx.Anchor == "middle" && tx.Y == 196 {
					ticks = append(ticks, tx.Text)
				}
			}
			if tt.wantTicks != nil {
				assert.Equal(t, tt.wantTicks, ticks)
			}
			n := 0
			for _, r := range c.Rects {
				assert.GreaterOrEqual(t, r.X, 40.0)
				assert.LessOrEqual(t, r.X+r.W, 544.0)
				n++
			}
			assert.Equal(t, tt.wantBars, n)
		})
	}
}

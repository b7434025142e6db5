package runner_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
)

// BenchmarkReport1000 builds the report of 1,000 sessions, each with a 40 KiB transcript
// and 30 tool calls (so that every one is cut to its limits), and opens it from file://
// in headless Chromium. ns/op is building report.html from summary.json and the session
// folders (cpu-s/op the CPU time it takes, on all cores); first-paint-ms is the page's first contentful paint, the median of 5 loads;
// open-session-ms the time from a click on a row to its details shown; report-MB the
// file's size.
//
//	go test -run '^$' -bench BenchmarkReport1000 -benchtime 3x ./runner
func BenchmarkReport1000(b *testing.B) {
	out := b.TempDir()
	writeSyntheticRun(b, out, synthetic{sessions: 1000, transcript: 40 << 10, calls: 30, text: "fix the handler"})
	cpu0, _ := cpuTime(b)
	for b.Loop() {
		_, err := runner.Report(out)
		require.NoError(b, err)
	}
	cpu1, _ := cpuTime(b)
	b.ReportMetric((cpu1-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	report := filepath.Join(out, runner.ReportFile)
	st, err := os.Stat(report)
	require.NoError(b, err)
	b.ReportMetric(float64(st.Size())/1e6, "report-MB")

	br := startBrowser(b, 1280, 900)
	var paints, opens []float64
	for range 5 {
		br.open("about:blank")
		br.open(fileURL(b, report, ""))
		var m struct {
			FCP  float64
			Rows int
		}
		// The paint entry is recorded when the frame is shown, which may be after load.
		br.eval(`new Promise((resolve) => new PerformanceObserver((list, obs) => {
  const e = list.getEntriesByName("first-contentful-paint")[0];
  if (e) { obs.disconnect(); resolve({fcp: e.startTime, rows: document.querySelectorAll("#sessions tbody tr.row").length}); }
}).observe({type: "paint", buffered: true}))`, &m)
		require.Equal(b, 1000, m.Rows)
		paints = append(paints, m.FCP)
		var ms float64
		br.eval(`(() => { const t0 = performance.now(); document.querySelector('tr.row[data-i="500"]').click();
  return `+waitDetail+`.then((d) => { if (d.state !== "loaded") throw new Error(d.state); return performance.now() - t0; }); })()`, &ms)
		opens = append(opens, ms)
	}
	b.ReportMetric(median(paints), "first-paint-ms")
	b.ReportMetric(median(opens), "open-session-ms")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

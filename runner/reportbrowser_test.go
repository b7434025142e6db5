package runner_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
)

// fileURL is the file:// address of path, with an optional fragment.
func fileURL(t testing.TB, path, fragment string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	u := url.URL{Scheme: "file", Path: abs, Fragment: fragment}
	return u.String()
}

// waitDetail is an expression that waits (in the page, up to 10 s) until the session
// panel has loaded or failed, and returns what it shows.
const waitDetail = `new Promise((resolve, reject) => {
  const panel = document.getElementById("detail");
  const done = () => panel.dataset.state === "loaded" || panel.dataset.state === "error";
  const report = () => {
    const part = (name) => { const e = panel.querySelector('[data-part="' + name + '"]'); return e ? e.textContent : null; };
    const checks = {};
    panel.querySelectorAll("[data-check]").forEach((c) => { checks[c.dataset.check] = c.textContent; });
    resolve({state: panel.dataset.state, key: panel.dataset.key, hidden: panel.hidden,
      title: document.getElementById("detail-title").textContent, hash: location.hash,
      result: part("result"), checks, transcript: part("transcript"), tools: part("tool-calls"),
      changes: part("changes"), text: panel.textContent});
  };
  if (done()) return report();
  const obs = new MutationObserver(() => { if (done()) { obs.disconnect(); report(); } });
  obs.observe(panel, {attributes: true, attributeFilter: ["data-state"]});
  setTimeout(() => { obs.disconnect(); reject(new Error("the session panel did not load: " + panel.dataset.state)); }, 10000);
})`

// detailView is what waitDetail returns.
type detailView struct {
	State, Key, Title, Hash, Result, Transcript, Tools, Changes, Text string
	Hidden                                                            bool
	Checks                                                            map[string]string
}

// groupCells is an expression returning the cells of the aggregate table of a kind
// (model, job, job and model): label → [sessions, passed, pass rate, pass@1, …].
func groupCells(kind string) string {
	return `(() => { const out = {};
  document.querySelectorAll('table.groups[data-group="` + kind + `"] tbody tr').forEach((tr) => {
    out[tr.cells[0].textContent] = Array.from(tr.cells).slice(1).map((c) => c.textContent); });
  return out; })()`
}

// visibleKeys is an expression returning the keys of the shown session rows, in order.
const visibleKeys = `Array.from(document.querySelectorAll("#sessions tbody tr.row")).filter((r) => !r.hidden).map((r) => r.dataset.key)`

// TestReportInBrowser opens the report of the evaluation run (3 jobs × 2 models ×
// repeat 3) from file:// in headless Chromium and checks what a person sees and does:
// the rows and the pass@k numbers, filtering and sorting the table, and opening a
// failed session to its reason, check output and transcript, and a passed one to its
// tool calls and changes, also through a #session= link.
func TestReportInBrowser(t *testing.T) {
	t.Parallel()
	b := startBrowser(t, 1280, 900)
	out, sum := runEvaluation(t)
	report := filepath.Join(out, runner.ReportFile)
	require.FileExists(t, report)
	b.open(fileURL(t, report, ""))

	var n int
	b.eval(`document.querySelectorAll("#sessions tbody tr.row").length`, &n)
	assert.Equal(t, 18, n)
	var totals map[string]string
	b.eval(`Object.fromEntries(Array.from(document.querySelectorAll("#totals div")).map((d) => [d.querySelector("dt").textContent, d.querySelector("dd").textContent]))`, &totals)
	assert.Equal(t, "18", totals["Sessions"])
	assert.Equal(t, "9", totals["Passed"])
	assert.Equal(t, "50.0%", totals["Pass rate"])

	// The pass@k numbers are the summary's: alpha's pass@2 is (1 + 1 + 2/3) / 3.
	want := func(groups []runner.Group, label func(runner.Group) string) map[string][]string {
		m := map[string][]string{}
		for _, g := range groups {
			cells := []string{strconv.Itoa(g.Sessions), strconv.Itoa(g.Passed), pct(g.PassRate)}
			for k := 1; k <= 3; k++ {
				cells = append(cells, pct(g.PassAtK[strconv.Itoa(k)]))
			}
			m[label(g)] = cells
		}
		return m
	}
	var byModel, byJob map[string][]string
	b.eval(groupCells("model"), &byModel)
	b.eval(groupCells("job"), &byJob)
	for label, cells := range want(sum.Aggregates.ByModel, runner.Group.Label) {
		require.Contains(t, byModel, label)
		assert.Equal(t, cells, byModel[label][:6], label)
	}
	for label, cells := range want(sum.Aggregates.ByJob, runner.Group.Label) {
		require.Contains(t, byJob, label)
		assert.Equal(t, cells, byJob[label][:6], label)
	}
	assert.Equal(t, []string{"9", "6", "66.7%", "66.7%", "88.9%", "100.0%"}, byModel["scripted/alpha"][:6])
	var chartTexts []string
	b.eval(`Array.from(document.querySelectorAll("figure.chart")[0].querySelectorAll("svg text")).map((e) => e.textContent)`, &chartTexts)
	assert.Contains(t, chartTexts, "88.9%", "the pass rate chart by model")
	assert.Contains(t, chartTexts, "scripted/alpha")

	// Filtering: a word, then a status.
	var keys []string
	b.eval(`(() => { const q = document.getElementById("q"); q.value = "beta"; q.dispatchEvent(new Event("input")); return `+visibleKeys+`; })()`, &keys)
	assert.Len(t, keys, 9)
	var shown string
	b.eval(`(() => { const s = document.getElementById("status"); s.value = "failed"; s.dispatchEvent(new Event("change"));
  return document.getElementById("shown").textContent; })()`, &shown)
	assert.Equal(t, "6 of 18 sessions", shown, "beta fails 2 + 3 + 1 sessions")
	b.eval(`(() => { document.getElementById("q").value = "hard"; document.getElementById("q").dispatchEvent(new Event("input")); return `+visibleKeys+`; })()`, &keys)
	assert.Equal(t, []string{"hard+model=alpha.r1", "hard+model=alpha.r2", "hard+model=beta.r3"}, keys)
	b.eval(`(() => { document.getElementById("q").value = ""; const s = document.getElementById("status"); s.value = "";
  s.dispatchEvent(new Event("change")); return `+visibleKeys+`; })()`, &keys)
	assert.Len(t, keys, 18)

	// Sorting by duration, up and then down.
	durations := func() []int {
		var ds []int
		b.eval(`Array.from(document.querySelectorAll("#sessions tbody tr.row")).map((r) => Number(r.cells[6].dataset.v))`, &ds)
		return ds
	}
	b.eval(`document.querySelectorAll("#sessions thead th")[6].click()`, nil)
	up := durations()
	assert.True(t, slices.IsSorted(up), "ascending: %v", up)
	b.eval(`document.querySelectorAll("#sessions thead th")[6].click()`, nil)
	down := durations()
	slices.Reverse(down)
	assert.True(t, slices.IsSorted(down), "descending: %v", down)

	// A failed session opens to its reason: the check's name and output.
	failed := "hard+model=beta.r3"
	require.Equal(t, "error_checks", string(rows(sum)[failed].Status))
	var d detailView
	b.eval(`document.querySelector('tr.row[data-key="`+failed+`"]').click()`, nil)
	b.eval(waitDetail, &d)
	require.Equal(t, "loaded", d.State, d.Text)
	assert.Equal(t, failed, d.Title)
	assert.False(t, d.Hidden)
	assert.Equal(t, "#session="+url.QueryEscape(failed), d.Hash)
	assert.Contains(t, d.Result, "error_checks: check notes failed: exit code 1")
	require.Contains(t, d.Checks, "notes")
	assert.Contains(t, d.Checks["notes"], "✗ notes · exit 1")
	assert.Contains(t, d.Checks["notes"], "[exit code 1]")
	assert.Contains(t, d.Transcript, "I looked and changed nothing.")
	assert.Contains(t, d.Tools, "Tool calls (0)")
	assert.Contains(t, d.Changes, "No Write or Edit call changed a file.")

	// A passed session, opened by its link: its Write call and the file it wrote.
	passed := "hard+model=beta.r1"
	b.open("about:blank")
	b.open(fileURL(t, report, "session="+passed))
	b.eval(waitDetail, &d)
	require.Equal(t, "loaded", d.State, d.Text)
	assert.Equal(t, passed, d.Title)
	assert.Contains(t, d.Checks["notes"], "✓ notes · exit 0")
	assert.Contains(t, d.Tools, "Tool calls (1)")
	assert.Contains(t, d.Tools, `"path": "notes/success.txt"`)
	assert.Contains(t, d.Tools, "wrote 5 bytes to notes/success.txt")
	assert.Contains(t, d.Changes, "Write notes/success.txt")
	assert.Contains(t, d.Changes, "done")

	// Escape closes the panel and drops the link.
	var closed struct {
		Hidden bool
		Hash   string
	}
	b.eval(`(() => { document.dispatchEvent(new KeyboardEvent("keydown", {key: "Escape"}));
  return {hidden: document.getElementById("detail").hidden, hash: location.hash}; })()`, &closed)
	assert.True(t, closed.Hidden)
	assert.Empty(t, closed.Hash)
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// steadyEvaluation runs the evaluation and rewrites its summary.json with fixed
// times, durations, tokens, costs and names, one session with the sandbox off and a
// warning, then its report: the page looks the same at every run.
func steadyEvaluation(t *testing.T) string {
	t.Helper()
	out, _ := runEvaluation(t)
	rewriteJSON(t, filepath.Join(out, runner.SummaryFile), func(s *runner.Summary) {
		s.Spec, s.SpecDigest, s.SessionsDigest = "evaluation.yaml", strings.Repeat("5e", 32), strings.Repeat("d1", 32)
		s.StartedAt, s.EndedAt, s.DurationMS = "2026-01-02T03:04:05Z", "2026-01-02T03:05:35Z", 90_000
		s.Warnings = []string{"A warning of the run: the report shows each of summary.json's warnings here."}
		for i := range s.Sessions {
			r := &s.Sessions[i]
			r.SessionID = fmt.Sprintf("20260102-030405-%08d", i)
			r.DurationMS = int64(1500 + (i*7919)%9000)
			r.Usage = protocol.Usage{Input: int64(2000 + 150*i), Output: int64(300 + 20*i)}
			cost := 0.004 + 0.0005*float64(i)
			if r.Model == "alpha" {
				cost *= 4
			}
			r.CostUSD = &cost
			r.Sandbox = "strict"
		}
		s.Sessions[0].Sandbox = "off"
	})
	_, err := runner.Report(out)
	require.NoError(t, err)
	return filepath.Join(out, runner.ReportFile)
}

// screenshotScale and screenshotTolerance make the comparison loose: both images are
// averaged over blocks of 8 × 8 pixels, and their mean difference per colour channel
// may be up to 3 of 255, which a font's hinting changes, and a changed number, bar or
// colour does not.
const (
	screenshotScale     = 8
	screenshotTolerance = 3.0
)

// TestReportScreenshot compares the top of the report of steadyEvaluation, in headless
// Chromium, with testdata/TestReportScreenshot/report.png (-update rewrites it).
func TestReportScreenshot(t *testing.T) {
	t.Parallel()
	b := startBrowser(t, 1280, 1100)
	report := steadyEvaluation(t)
	b.open(fileURL(t, report, ""))
	b.eval(`document.fonts.ready.then(() => true)`, nil)
	got := b.screenshot()
	path := filepath.Join("testdata", t.Name(), "report.png")
	if updating() {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create it")
	diff, err := imageDifference(want, got, screenshotScale)
	require.NoError(t, err)
	if diff > screenshotTolerance {
		saved := filepath.Join(os.TempDir(), "TestReportScreenshot-got.png")
		_ = os.WriteFile(saved, got, 0o644)
		t.Errorf("the report looks different: mean difference %.2f > %.2f per channel; the screenshot is %s (-update makes it the golden)",
			diff, screenshotTolerance, saved)
	}
}

// TestImageDifference checks the loose comparison: the same picture is at 0, a picture
// whose pass rate bar or table changed is beyond the tolerance.
func TestImageDifference(t *testing.T) {
	t.Parallel()
	base := image.NewRGBA(image.Rect(0, 0, 320, 240))
	draw.Draw(base, base.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(base, image.Rect(20, 20, 200, 40), image.NewUniform(color.RGBA{8, 81, 156, 255}), image.Point{}, draw.Src)
	encode := func(img image.Image) []byte {
		var buf bytes.Buffer
		require.NoError(t, png.Encode(&buf, img))
		return buf.Bytes()
	}
	variant := func(change func(*image.RGBA)) []byte {
		img := image.NewRGBA(base.Bounds())
		draw.Draw(img, img.Bounds(), base, image.Point{}, draw.Src)
		change(img)
		return encode(img)
	}
	tests := map[string]struct {
		other   []byte
		withinT bool
	}{
		"same":                     {encode(base), true},
		"a pixel of anti-aliasing": {variant(func(img *image.RGBA) { img.Set(5, 5, color.RGBA{200, 200, 200, 255}) }), true},
		"a longer bar": {variant(func(img *image.RGBA) {
			draw.Draw(img, image.Rect(200, 20, 300, 40), image.NewUniform(color.RGBA{8, 81, 156, 255}), image.Point{}, draw.Src)
		}), false},
		"another colour": {variant(func(img *image.RGBA) {
			draw.Draw(img, image.Rect(20, 20, 200, 40), image.NewUniform(color.RGBA{213, 94, 0, 255}), image.Point{}, draw.Src)
		}), false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := imageDifference(encode(base), tt.other, screenshotScale)
			require.NoError(t, err)
			assert.Equal(t, tt.withinT, d <= screenshotTolerance, "difference %.2f", d)
		})
	}
	_, err := imageDifference(encode(base), encode(image.NewRGBA(image.Rect(0, 0, 10, 10))), screenshotScale)
	assert.ErrorContains(t, err, "size")
}

// imageDifference decodes two PNGs of one size, averages each over blocks of scale ×
// scale pixels and returns the mean absolute difference per colour channel (0–255).
func imageDifference(a, b []byte, scale int) (float64, error) {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return 0, err
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	if ia.Bounds().Size() != ib.Bounds().Size() {
		return 0, fmt.Errorf("size %v against %v", ia.Bounds().Size(), ib.Bounds().Size())
	}
	sa, sb := downscale(ia, scale), downscale(ib, scale)
	total := 0.0
	for i := range sa {
		total += math.Abs(sa[i] - sb[i])
	}
	return total / float64(len(sa)), nil
}

// downscale averages img over blocks of scale × scale pixels: R, G, B per block.
func downscale(img image.Image, scale int) []float64 {
	r := img.Bounds()
	w, h := (r.Dx()+scale-1)/scale, (r.Dy()+scale-1)/scale
	sum := make([]float64, w*h*3)
	count := make([]float64, w*h)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			i := ((y-r.Min.Y)/scale)*w + (x-r.Min.X)/scale
			sum[3*i] += float64(cr >> 8)
			sum[3*i+1] += float64(cg >> 8)
			sum[3*i+2] += float64(cb >> 8)
			count[i]++
		}
	}
	for i := range sum {
		sum[i] /= count[i/3]
	}
	return sum
}

// markup is model output that would run script if it became markup.
const markup = `<script>window.pwned = 1</script></script><img src=x onerror="window.pwned = 2"><b>bold</b>`

// TestReportSessionTextStaysText opens, in Chromium, a session whose transcript, final
// answer, error, check output and tool calls hold script and closing script tags: they
// show as text, no script runs, no element is made of them, and the large transcript
// and many tool calls say that they were cut.
func TestReportSessionTextStaysText(t *testing.T) {
	t.Parallel()
	b := startBrowser(t, 1280, 900)
	out := t.TempDir()
	sum := writeSyntheticRun(t, out, synthetic{sessions: 3, transcript: 64 << 10, calls: 60, text: markup})
	_, err := runner.Report(out)
	require.NoError(t, err)
	b.open(fileURL(t, filepath.Join(out, runner.ReportFile), ""))

	var failed string
	for _, r := range sum.Sessions {
		if r.Error != nil {
			failed = r.Key
		}
	}
	require.NotEmpty(t, failed, "the synthetic run has a failed session")
	var d detailView
	b.eval(`document.querySelector('tr.row[data-key="`+failed+`"]').click()`, nil)
	b.eval(waitDetail, &d)
	require.Equal(t, "loaded", d.State, d.Text)
	for part, text := range map[string]string{"result": d.Result, "transcript": d.Transcript, "tools": d.Tools, "check": d.Checks["vet"]} {
		assert.Contains(t, text, markup, part)
	}
	assert.Contains(t, d.Transcript, "Cut: the last 12.0 KiB of 64.")
	assert.Contains(t, d.Transcript, "sessions/"+failed+"/transcript.txt")
	assert.Regexp(t, `Cut: the first \d+ calls are left out; every call is in sessions/`+regexp.QuoteMeta(failed)+`/events.jsonl`, d.Tools)

	var page struct {
		Pwned   any
		Scripts int
		Images  int
		Bold    int
		Reason  string
	}
	b.eval(`(() => { document.querySelectorAll("#detail details").forEach((e) => { e.open = true; });
  return {pwned: window.pwned === undefined ? null : window.pwned, scripts: document.scripts.length,
    images: document.images.length, bold: document.querySelectorAll("b").length,
    reason: document.querySelector('tr.row[data-key="`+failed+`"] td.reason').textContent}; })()`, &page)
	assert.Nil(t, page.Pwned, "no script of the session ran")
	assert.Equal(t, 1+len(sum.Sessions), page.Scripts, "the report's script and one details block per session")
	assert.Zero(t, page.Images)
	assert.Zero(t, page.Bold)
	assert.Equal(t, "error_checks: failed checks: vet "+markup, page.Reason)
}

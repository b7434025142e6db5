package runner

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// The charts of report.html are inline SVG laid out here and drawn by the template:
// no script and no library, so they show as soon as the page does.

// chartPalette is the Okabe-Ito palette, told apart with every kind of colour vision.
var chartPalette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}

// Chart colours of a passed and a failed session.
const (
	colorPassed = "#009E73"
	colorFailed = "#D55E00"
)

// chartWidth is the width of every chart's view box.
const chartWidth = 560

// svgText is a text of a chart at x, y.
type svgText struct {
	X, Y   float64
	Text   string
	Anchor string // start, middle or end
}

// svgRect is a bar, with the tooltip Title.
type svgRect struct {
	X, Y, W, H float64
	Fill       string
	Title      string
}

// svgLine is an axis or a grid line.
type svgLine struct{ X1, Y1, X2, Y2 float64 }

// svgDot is a point of a scatter plot.
type svgDot struct {
	X, Y  float64
	Fill  string
	Title string
	Label svgText
}

// legendItem is one colour of a chart's legend.
type legendItem struct {
	Color, Text string
}

// chart is one SVG chart: its size and what it draws.
type chart struct {
	Title  string
	W, H   float64
	Rects  []svgRect
	Lines  []svgLine
	Texts  []svgText
	Dots   []svgDot
	Legend []legendItem
	// Empty says why there is nothing to draw.
	Empty string
}

// r1 rounds a coordinate to a tenth, which keeps the SVG short.
func r1(x float64) float64 { return math.Round(x*10) / 10 }

// passChart draws pass@1 … pass@k of each group as horizontal bars, with the value at
// the end of each bar.
func passChart(title string, groups []Group) chart {
	c := chart{Title: title, W: chartWidth}
	if len(groups) == 0 {
		c.Empty, c.H = "no sessions", 40
		return c
	}
	ks := shownK(groups)
	what := func(k int) string { return fmt.Sprintf("pass@%d", k) }
	if len(ks) == 0 {
		// Rows without provenance, before pass@k: the pass rate alone.
		ks, what = []int{1}, func(int) string { return "pass rate" }
	}
	const left, right, barH, gap, groupGap, top = 150.0, 50.0, 11.0, 2.0, 12.0, 6.0
	span := chartWidth - left - right
	for i, k := range ks {
		c.Legend = append(c.Legend, legendItem{passColor(i+1, len(ks)), what(k)})
	}
	y := top
	for _, g := range groups {
		blockH := float64(len(ks))*(barH+gap) - gap
		c.Texts = append(c.Texts, svgText{X: left - 8, Y: r1(y + blockH/2 + 4), Text: clip(g.Label(), 22), Anchor: "end"})
		for i, k := range ks {
			v, ok := g.PassAtK[strconv.Itoa(k)]
			if len(g.PassAtK) == 0 && what(k) == "pass rate" {
				v, ok = g.PassRate, true
			}
			by := y + float64(i)*(barH+gap)
			if !ok {
				c.Texts = append(c.Texts, svgText{X: left + 2, Y: r1(by + barH - 2), Text: "–", Anchor: "start"})
				continue
			}
			w := r1(math.Min(math.Max(v*span, 1), span))
			c.Rects = append(c.Rects, svgRect{X: left, Y: r1(by), W: w, H: barH, Fill: passColor(i+1, len(ks)),
				Title: fmt.Sprintf("%s %s %s (%d sessions, %d passed, %d tasks)", g.Label(), what(k), percent(v), g.Sessions, g.Passed, g.Tasks)})
			c.Texts = append(c.Texts, svgText{X: r1(left + w + 4), Y: r1(by + barH - 2), Text: percent(v), Anchor: "start"})
		}
		y += blockH + groupGap
	}
	c.Lines = append(c.Lines, svgLine{left, top - 4, left, r1(y - groupGap + 4)})
	c.H = r1(y)
	return c
}

// passColor shades pass@k from dark (k = 1) to light (k = kmax).
func passColor(k, kmax int) string {
	shades := []string{"#08519c", "#3182bd", "#6baed6", "#9ecae1", "#c6dbef"}
	if kmax <= 1 {
		return shades[0]
	}
	return shades[(k-1)*(len(shades)-1)/(kmax-1)]
}

// costChart plots each job and model's cost (x) against its pass rate (y), one colour
// per model.
func costChart(sum *Summary) chart {
	c := chart{Title: "Cost against pass rate (each job and model)", W: chartWidth, H: 300}
	groups := sum.Aggregates.ByJobModel
	if len(groups) == 0 {
		c.Empty, c.H = "no sessions", 40
		return c
	}
	const left, right, top, bottom = 56.0, 24.0, 12.0, 40.0
	pw, ph := chartWidth-left-right, c.H-top-bottom
	maxCost := 0.0
	for _, g := range groups {
		maxCost = math.Max(maxCost, g.CostUSD)
	}
	xmax := niceCeil(maxCost)
	for i := 0; i <= 4; i++ {
		y := r1(top + ph - float64(i)*ph/4)
		c.Lines = append(c.Lines, svgLine{left, y, left + pw, y})
		c.Texts = append(c.Texts, svgText{X: left - 6, Y: y + 4, Text: fmt.Sprintf("%d%%", i*25), Anchor: "end"})
	}
	for i := 0; i <= 4; i++ {
		x := r1(left + float64(i)*pw/4)
		c.Texts = append(c.Texts, svgText{X: x, Y: top + ph + 16, Text: dollars(xmax * float64(i) / 4), Anchor: "middle"})
	}
	c.Texts = append(c.Texts, svgText{X: left + pw/2, Y: c.H - 4, Text: "cost (USD)", Anchor: "middle"})
	colors := map[string]string{}
	for _, g := range sum.Aggregates.ByModel {
		id := modelLabel(g.Provider, g.Model)
		colors[id] = chartPalette[len(colors)%len(chartPalette)]
		c.Legend = append(c.Legend, legendItem{colors[id], id})
	}
	labels := len(groups) <= 24
	at := map[[2]float64]int{} // dots drawn at one place share one label
	for _, g := range groups {
		x := r1(left + g.CostUSD/xmax*pw)
		y := r1(top + ph - g.PassRate*ph)
		cost := dollars(g.CostUSD)
		if !g.CostComplete {
			cost += "+ (some sessions unpriced)"
		}
		d := svgDot{X: x, Y: y, Fill: colors[modelLabel(g.Provider, g.Model)],
			Title: fmt.Sprintf("%s: pass rate %s, cost %s, %d sessions", g.Label(), percent(g.PassRate), cost, g.Sessions)}
		place := [2]float64{x, y}
		if i, ok := at[place]; ok {
			// Another dot here: a step to the right, so that both colours show, and
			// its job named in the first one's label.
			n := 0
			for _, o := range c.Dots {
				if o.Y == y && o.X >= x && o.X <= x+40 {
					n++
				}
			}
			d.X = r1(x + float64(n)*4)
			if l := &c.Dots[i].Label; labels && !slices.Contains(strings.Split(l.Text, ", "), g.JobID) {
				l.Text = clip(l.Text+", "+g.JobID, 40)
			}
			if labels {
				c.Dots[i].Label.X = r1(c.Dots[i].Label.X + 4)
			}
			c.Dots = append(c.Dots, d)
			continue
		}
		if labels {
			d.Label = svgText{X: x + 8, Y: y + 4, Text: clip(g.JobID, 18), Anchor: "start"}
			if x > left+pw*0.75 {
				d.Label.X, d.Label.Anchor = x-8, "end"
			}
		}
		at[place] = len(c.Dots)
		c.Dots = append(c.Dots, d)
	}
	return c
}

// dollars renders a cost with as many decimals as small costs need.
func dollars(v float64) string {
	switch {
	case v == 0:
		return "$0"
	case v < 0.01:
		return fmt.Sprintf("$%.4f", v)
	case v < 10:
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("$%.0f", v)
}

// niceCeil is the smallest of 1, 2, 2.5 or 5 times a power of ten that is at least v;
// 1 for v ≤ 0, so that an all-zero axis still has a scale.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// durationChart is a histogram of the sessions' durations, passed and failed stacked.
func durationChart(rows []Row) chart {
	c := chart{Title: "Duration of the sessions", W: chartWidth, H: 220,
		Legend: []legendItem{{colorPassed, "passed"}, {colorFailed, "failed"}}}
	if len(rows) == 0 {
		c.Empty, c.H, c.Legend = "no sessions", 40, nil
		return c
	}
	const maxBins = 20
	const left, right, top, bottom = 40.0, 16.0, 12.0, 40.0
	pw, ph := chartWidth-left-right, c.H-top-bottom
	longest := 0.0
	for _, r := range rows {
		longest = math.Max(longest, float64(r.DurationMS))
	}
	// Bins of a round width, as many as the longest session needs.
	width := math.Max(niceCeil((longest+1)/maxBins), 1) // ms per bin
	bins := int(math.Max(math.Min(math.Ceil((longest+1)/width), maxBins), 1))
	passed, failed := make([]int, bins), make([]int, bins)
	for _, r := range rows {
		b := int(math.Min(math.Max(float64(r.DurationMS)/width, 0), float64(bins-1)))
		if r.Status == protocol.StatusSuccess {
			passed[b]++
		} else {
			failed[b]++
		}
	}
	most := 1
	for b := range bins {
		most = max(most, passed[b]+failed[b])
	}
	ymax := int(niceCeil(float64(most)))
	bw := pw / float64(bins)
	for i := 0; i <= 4; i++ {
		y := r1(top + ph - float64(i)*ph/4)
		c.Lines = append(c.Lines, svgLine{left, y, left + pw, y})
		if v := float64(ymax) * float64(i) / 4; v == math.Trunc(v) {
			c.Texts = append(c.Texts, svgText{X: left - 6, Y: y + 4, Text: strconv.Itoa(int(v)), Anchor: "end"})
		}
	}
	for b := range bins {
		x := left + float64(b)*bw
		from, to := int64(float64(b)*width), int64(float64(b+1)*width)
		base := top + ph
		for _, part := range []struct {
			n     int
			color string
			what  string
		}{{passed[b], colorPassed, "passed"}, {failed[b], colorFailed, "failed"}} {
			if part.n == 0 {
				continue
			}
			h := float64(part.n) / float64(ymax) * ph
			c.Rects = append(c.Rects, svgRect{X: r1(x + 1), Y: r1(base - h), W: r1(bw - 2), H: r1(h), Fill: part.color,
				Title: fmt.Sprintf("%d %s in %s–%s", part.n, part.what, duration(from), duration(to))})
			base -= h
		}
	}
	for _, b := range []int{0, bins / 2, bins} {
		c.Texts = append(c.Texts, svgText{X: r1(left + float64(b)*bw), Y: top + ph + 16,
			Text: duration(int64(float64(b) * width)).String(), Anchor: "middle"})
	}
	c.Texts = append(c.Texts, svgText{X: left + pw/2, Y: c.H - 4, Text: "duration (sessions per bin)", Anchor: "middle"})
	return c
}

// sortedStatuses lists the statuses of a run, success first, then by name.
func sortedStatuses(by map[protocol.Status]int) []protocol.Status {
	var out []protocol.Status
	for st, n := range by {
		if n > 0 {
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b protocol.Status) int {
		switch {
		case a == b:
			return 0
		case a == protocol.StatusSuccess:
			return -1
		case b == protocol.StatusSuccess:
			return 1
		case a < b:
			return -1
		}
		return 1
	})
	return out
}

package tools

import (
	"fmt"
	"strings"
)

const (
	// diffContext is the number of unchanged lines shown around a change.
	diffContext = 3
	// maxDiffEdits bounds the Myers search; beyond it the changed region is shown as
	// one block of removed lines followed by one of added lines.
	maxDiffEdits = 1000
	// noEOL marks a last line without a newline, as diff -u does.
	noEOL = "\n\\ No newline at end of file"
)

// diffOp is one line of an edit script: ' ' keeps a[a], '-' removes a[a], '+' adds
// b[b] before a[a].
type diffOp struct {
	kind byte
	a, b int
}

// diffLines splits text into lines, marking a last line that has no newline.
func diffLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += noEOL
	return lines
}

// unifiedDiff renders the difference between two versions of a file as a unified
// diff with three lines of context, and counts the added and removed lines.
func unifiedDiff(label, before, after string) (text string, added, removed int) {
	a, b := diffLines(before), diffLines(after)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	var ops []diffOp
	for i := max(0, p-diffContext); i < p; i++ {
		ops = append(ops, diffOp{' ', i, i})
	}
	window, ok := myers(a[p:len(a)-s], b[p:len(b)-s], maxDiffEdits)
	if !ok {
		window = nil
		for i := p; i < len(a)-s; i++ {
			window = append(window, diffOp{'-', i - p, 0})
		}
		for j := p; j < len(b)-s; j++ {
			window = append(window, diffOp{'+', len(a) - s - p, j - p})
		}
	}
	for _, op := range window {
		op.a += p
		op.b += p
		ops = append(ops, op)
		switch op.kind {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	for i := 0; i < min(s, diffContext); i++ {
		ops = append(ops, diffOp{' ', len(a) - s + i, len(b) - s + i})
	}
	if added+removed == 0 {
		return "", 0, 0
	}
	var w strings.Builder
	fmt.Fprintf(&w, "--- a/%s\n+++ b/%s\n", label, label)
	writeHunks(&w, ops, a, b)
	return sanitize([]byte(w.String())), added, removed
}

// writeHunks groups the edit script into hunks and writes them.
func writeHunks(w *strings.Builder, ops []diffOp, a, b []string) {
	for i := 0; i < len(ops); {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			return
		}
		start := max(0, i-diffContext)
		end := i // one past the last change of the hunk
		for j := i; j < len(ops) && j < end+2*diffContext+1; j++ {
			if ops[j].kind != ' ' {
				end = j + 1
			}
		}
		stop := min(len(ops), end+diffContext)
		writeHunk(w, ops[start:stop], a, b)
		i = stop
	}
}

func writeHunk(w *strings.Builder, ops []diffOp, a, b []string) {
	aStart, bStart := ops[0].a, ops[0].b
	aLen, bLen := 0, 0
	for _, op := range ops {
		if op.kind != '+' {
			aLen++
		}
		if op.kind != '-' {
			bLen++
		}
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, op := range ops {
		line := ""
		switch op.kind {
		case '+':
			line = b[op.b]
		default:
			line = a[op.a]
		}
		w.WriteByte(op.kind)
		w.WriteString(line)
		w.WriteByte('\n')
	}
}

// hunkRange renders "start,len" with the 1-based start; an empty range names the
// line before it, as diff -u does.
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// myers computes a shortest edit script from a to b with Myers' algorithm. It gives
// up (false) when more than maxD edits are needed.
func myers(a, b []string, maxD int) ([]diffOp, bool) {
	n, m := len(a), len(b)
	if n+m == 0 {
		return nil, true
	}
	off := n + m
	v := make([]int, 2*(n+m)+2)
	var trace [][]int
	for d := 0; d <= n+m; d++ {
		if d > maxD {
			return nil, false
		}
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
				return backtrack(trace, a, b), true
			}
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
	}
	return nil, false
}

// backtrack walks the saved frontiers back from the end to build the edit script.
// trace[d] holds the furthest x of diagonals -d…d after step d.
func backtrack(trace [][]int, a, b []string) []diffOp {
	x, y := len(a), len(b)
	var rev []diffOp
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1]
		at := func(k int) int { return prev[k+d-1] }
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			rev = append(rev, diffOp{' ', x, y})
		}
		if x == prevX {
			y--
			rev = append(rev, diffOp{'+', x, y})
		} else {
			x--
			rev = append(rev, diffOp{'-', x, y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, diffOp{' ', x, y})
	}
	ops := make([]diffOp, len(rev))
	for i, op := range rev {
		ops[len(rev)-1-i] = op
	}
	return ops
}

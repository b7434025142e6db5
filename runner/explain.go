package runner

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/textcut"
)

// How much of a failed check's output explains a failure in the reports: 40 lines and
// 3,500 bytes, which with the summary line stay under the 4,096 characters GitHub
// keeps of an annotation.
const (
	explainLines     = 40
	explainBytes     = 3500
	explainLineBytes = 300 // a longer line is cut
	summaryBytes     = 500
	// minTailLines is the least an excerpt keeps of the output's last lines (where
	// test runners print their verdict), whatever it found before them.
	minTailLines = 10
	// contextLines are kept before the first line that names the failure.
	contextLines = 3
	// explainedChecks is how many failed checks' outputs one explanation shows.
	explainedChecks = 4
	// storedLineBytes cuts a line of the failure window that result.json keeps ahead
	// of a long output's tail.
	storedLineBytes = 1000
)

// Failure explains why a session failed. junit.xml (the failure's message and text),
// summary.md (the Failures section), the GitHub ::error annotation and summary.json
// all show this one value.
type Failure struct {
	// Summary is one line: the status and what failed ("error_checks: check tests
	// failed: exit code 1", "error_max_turns: max turns (2) reached").
	Summary string `json:"summary"`
	// Detail shows why: for failed checks, the lines of their output that name the
	// failure and the last lines; else the rest of a message of several lines.
	Detail string `json:"detail,omitempty"`
}

// Text is the summary line, then the detail.
func (f Failure) Text() string {
	if f.Detail == "" {
		return f.Summary
	}
	return f.Summary + "\n" + f.Detail
}

// explain says why res failed; nil when it succeeded.
func explain(res *protocol.Result) *Failure {
	if res.Status == protocol.StatusSuccess {
		return nil
	}
	var e protocol.Error
	if res.Error != nil {
		e = *res.Error
	}
	first, rest, _ := strings.Cut(strings.TrimSpace(sink.Clean(e.Describe(res.Status))), "\n")
	f := &Failure{Summary: string(res.Status)}
	if first != "" {
		f.Summary = clip(f.Summary+": "+first, summaryBytes)
	}
	var failed []protocol.Check
	for _, c := range res.Checks {
		if !c.Passed {
			failed = append(failed, c)
		}
	}
	switch {
	case len(failed) > 0:
		f.Detail = checksDetail(failed)
	case strings.TrimSpace(rest) != "":
		f.Detail = excerpt(rest, explainLines, explainBytes)
	}
	return f
}

// checksDetail shows the outputs of failed checks, the lines and bytes shared among the
// first explainedChecks of them, each headed by its name when there are several.
func checksDetail(failed []protocol.Check) string {
	if len(failed) == 1 {
		return excerpt(checkText(failed[0]), explainLines, explainBytes)
	}
	n, lines := min(len(failed), explainedChecks), explainLines
	if len(failed) > n {
		lines-- // for the line naming the rest
	}
	var parts []string
	for _, c := range failed[:n] {
		head := fmt.Sprintf("[check %s · exit code %d]", oneLine(c.Name), c.ExitCode)
		parts = append(parts, head+"\n"+excerpt(checkText(c), lines/n-1, explainBytes/n-len(head)-1))
	}
	if len(failed) > n {
		parts = append(parts, fmt.Sprintf("[%d more failed checks: see their result.json]", len(failed)-n))
	}
	return strings.Join(parts, "\n")
}

// checkText is a check's output without the exit-code line the runner ends it with,
// which the summary already says.
func checkText(c protocol.Check) string {
	out := strings.TrimRight(c.Output, "\n")
	out = strings.TrimSuffix(out, fmt.Sprintf("[exit code %d]", c.ExitCode))
	if strings.TrimSpace(out) == "" {
		return "(no output)"
	}
	return out
}

// oneLine makes s fit on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(sink.Clean(s)), " ")
}

// excerpt keeps at most maxLines lines and maxBytes bytes of text (escape sequences and
// control characters removed, lines cut at explainLineBytes): all of a short text; of
// a longer one, its last lines (minTailLines of them, or all that fit when no line
// names a failure) and, before them, the spans of lines that best name a failure, best
// first, while they fit. Each run of lines left out becomes one marker line.
func excerpt(text string, maxLines, maxBytes int) string {
	lines := strings.Split(strings.TrimRight(sink.Clean(text), " \t\n"), "\n")
	for len(lines) > 1 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for i, l := range lines {
		lines[i] = clip(l, explainLineBytes)
	}
	maxLines, maxBytes = max(maxLines, 2), max(maxBytes, 2*explainLineBytes)
	n := len(lines)
	keep := make([]bool, n)
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	if n <= maxLines && size <= maxBytes {
		return strings.Join(lines, "\n")
	}
	scores := scoresOf(lines)
	tail := n - min(minTailLines, maxLines/4, n) // the first line of the tail
	for i := tail; i < n; i++ {
		keep[i], scores[i] = true, 0
	}
	found := false
	for {
		used, size := rendered(lines, keep)
		// A span may split a run of left-out lines in two: room for one more marker.
		s, e, ok := failureSpan(lines, scores, maxLines-used-1, maxBytes-size-len(leftOut(n))-1)
		if !ok {
			break
		}
		was := slices.Clone(keep)
		for i := s; i < e; i++ {
			keep[i], scores[i] = true, 0
		}
		if used, size := rendered(lines, keep); used > maxLines || size > maxBytes {
			keep = was
			break
		}
		found = true
	}
	for i := tail - 1; !found && i >= 0 && !keep[i]; i-- {
		keep[i] = true
		if used, size := rendered(lines, keep); used > maxLines || size > maxBytes {
			keep[i] = false
			break
		}
	}
	var b strings.Builder
	for i := 0; i < n; {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if keep[i] {
			b.WriteString(lines[i])
			i++
			continue
		}
		j := i
		for j < n && !keep[j] {
			j++
		}
		b.WriteString(leftOut(j - i))
		i = j
	}
	return b.String()
}

// rendered counts the lines and bytes of an excerpt of lines: the kept ones, and a
// marker for each run of the others.
func rendered(lines []string, keep []bool) (n, size int) {
	for i := 0; i < len(lines); i++ {
		if keep[i] {
			n, size = n+1, size+len(lines[i])+1
			continue
		}
		j := i
		for j < len(lines) && !keep[j] {
			j++
		}
		n, size = n+1, size+len(leftOut(j-i))+1
		i = j - 1
	}
	return n, size
}

// leftOut is the marker of n lines left out of an excerpt.
func leftOut(n int) string {
	if n == 1 {
		return "[… 1 line left out …]"
	}
	return fmt.Sprintf("[… %d lines left out …]", n)
}

// failureSpan finds the lines [start, end) that best name a failure, scored by scores:
// of every span of maxLines lines, the earliest with the highest score, narrowed to its
// first and last line that score and widened by contextLines lines before, at most
// maxLines lines and maxBytes bytes. ok is false when no line scores.
func failureSpan(lines []string, scores []int, maxLines, maxBytes int) (start, end int, ok bool) {
	if maxLines <= 0 || len(lines) == 0 {
		return 0, 0, false
	}
	w := min(maxLines, len(lines))
	sum := 0
	for _, s := range scores[:w] {
		sum += s
	}
	best, at := sum, 0
	for i := w; i < len(lines); i++ {
		sum += scores[i] - scores[i-w]
		if sum > best {
			best, at = sum, i-w+1
		}
	}
	if best == 0 {
		return 0, 0, false
	}
	first, last := at, at+w-1
	for scores[first] == 0 {
		first++
	}
	for scores[last] == 0 {
		last--
	}
	start, end = max(first-contextLines, 0), last+1
	start = max(start, end-maxLines)
	size := 0
	for _, l := range lines[start:end] {
		size += len(l) + 1
	}
	for size > maxBytes && end-start > 1 {
		if start < first {
			size -= len(lines[start]) + 1
			start++
		} else {
			end--
			size -= len(lines[end]) + 1
		}
	}
	if size > maxBytes {
		return 0, 0, false
	}
	return start, end, true
}

// failureWords are what test runners, compilers and shells print where they say what
// failed, with how strongly each names a failure; passingLine marks the progress lines
// of passing tests, which score nothing whatever names they carry.
var (
	failureWords = []struct {
		re    *regexp.Regexp
		score int
	}{
		{regexp.MustCompile(`^\s*--- FAIL|^\s*not ok\b|^Traceback \(most recent call last\)`), 3},
		{regexp.MustCompile(`(?i)\bassert`), 3},
		{regexp.MustCompile(`\bpanic(ked)?\b`), 3},
		{regexp.MustCompile(`(?i)\berror(\[\w+\])?:`), 3},
		{regexp.MustCompile(`(?i)^\s*(expected|actual|received|got|want|wanted)\b\s*[:=]`), 3},
		{regexp.MustCompile(`\bgot\b.*\bwant\b|\bwant\b.*\bgot\b`), 3},
		{regexp.MustCompile(`\b(FAIL|FAILED|FAILURE|ERROR|FATAL)\b`), 2},
		{regexp.MustCompile(`\b[A-Z]\w*(Exception|Error)\b`), 2},
		{regexp.MustCompile(`[\w./\\-]*\w\.[A-Za-z]\w*:\d+|\bFile "[^"]+", line \d+`), 2},
		{regexp.MustCompile(`^E\s{2,}`), 2},
		{regexp.MustCompile(`(?i)\b(fail(s|ed|ure)?|fatal|cannot|not found|no such file|undefined|mismatch)\b`), 1},
	}
	passingLine = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|SKIP)|ok\s|PASS$)|\bPASSED\b`)
)

// scoresOf scores each line with failureScore.
func scoresOf(lines []string) []int {
	scores := make([]int, len(lines))
	for i, l := range lines {
		scores[i] = failureScore(l)
	}
	return scores
}

// failureScore is how strongly a line names a failure: 0 for most lines.
func failureScore(line string) int {
	if strings.TrimSpace(line) == "" || passingLine.MatchString(line) {
		return 0
	}
	score := 0
	for _, w := range failureWords {
		if w.re.MatchString(line) {
			score += w.score
		}
	}
	return score
}

// storedOutput is what result.json keeps of a check's output: all of it up to
// checkTail bytes; of a longer one, the last checkTail bytes and, ahead of them, the
// lines before them that best name the failure (failureSpan: up to explainLines lines
// and checkTail bytes), each run of lines left out marked.
func storedOutput(out string) string {
	if len(out) <= checkTail {
		return out
	}
	cut := textcut.TailStart(out, checkTail)
	head := strings.Split(out[:cut], "\n")
	head = head[:len(head)-1] // the start of the tail's first line
	for i, l := range head {
		head[i] = clip(l, storedLineBytes)
	}
	s, e, ok := failureSpan(head, scoresOf(head), explainLines, checkTail)
	if !ok {
		return "…" + out[cut:]
	}
	var b strings.Builder
	if s > 0 {
		b.WriteString(leftOut(s) + "\n")
	}
	b.WriteString(strings.Join(head[s:e], "\n") + "\n")
	if e < len(head) {
		b.WriteString(leftOut(len(head)-e) + "\n")
	}
	b.WriteString("…" + out[cut:])
	return b.String()
}

package sink

import (
	"io"
	"strings"
	"sync"
)

// Terminal is one terminal shared by lines of output and a live status line under them.
// Each writer from Lines erases the status line before its lines and draws it again after
// them, so a status never shares a row with output and old statuses never pile up; the
// status is cut to the terminal's width so that it never wraps. Terminal is safe for
// concurrent use. The status line is best effort: a failed write of it is not reported.
type Terminal struct {
	mu     sync.Mutex
	w      io.Writer  // the stream the status line is drawn on
	width  func() int // the terminal's columns; 0 or less when unknown
	status string     // the status line, one clean line; "" for none
	drawn  bool       // the status line is on the screen
	open   bool       // output left its last line unfinished: no status until it ends
}

// eraseLine moves to the start of the row and clears it.
const eraseLine = "\r\x1b[K"

// NewTerminal returns the terminal whose status line is drawn on w (stderr), width
// giving its columns at the time of each drawing.
func NewTerminal(w io.Writer, width func() int) *Terminal {
	return &Terminal{w: w, width: width}
}

// Lines returns a writer to w, a stream on the same terminal (stdout, or the log on
// stderr), that keeps its lines apart from the status line.
func (t *Terminal) Lines(w io.Writer) io.Writer { return &terminalLines{t: t, w: w} }

// Width returns the terminal's columns, or 0 when they are unknown.
func (t *Terminal) Width() int { return max(t.width(), 0) }

// SetStatus replaces the status line with s, made one line of printable text; "" removes
// it.
func (t *Terminal) SetStatus(s string) {
	s = statusText(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	if s == t.status && (t.drawn || t.open) {
		return
	}
	t.status = s
	if t.drawn && s == "" {
		t.write(eraseLine)
		t.drawn = false
		return
	}
	t.draw()
}

// Finish leaves the last status on the screen as an ordinary line and draws no status
// line until the next SetStatus.
func (t *Terminal) Finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.drawn:
		t.write("\n")
	case t.status != "" && !t.open:
		t.write(eraseLine + t.clip(t.status) + "\n")
	}
	t.status, t.drawn = "", false
}

// draw puts the status line on the screen, unless output left a line unfinished.
func (t *Terminal) draw() {
	if t.status == "" || t.open {
		return
	}
	t.write(eraseLine + t.clip(t.status))
	t.drawn = true
}

// erase takes the status line off the screen.
func (t *Terminal) erase() {
	if t.drawn {
		t.write(eraseLine)
		t.drawn = false
	}
}

func (t *Terminal) write(s string) { _, _ = io.WriteString(t.w, s) }

// clip cuts s to one column less than the terminal's width, so the cursor never reaches
// the last column (where some terminals wrap at once).
func (t *Terminal) clip(s string) string {
	w := t.width()
	if w <= 0 {
		return s
	}
	return clipColumns(s, w-1)
}

// terminalLines is a stream on a Terminal.
type terminalLines struct {
	t *Terminal
	w io.Writer
}

// Write erases the status line, writes p and draws the status line again when p ended
// its last line.
func (l *terminalLines) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	t := l.t
	t.mu.Lock()
	defer t.mu.Unlock()
	t.erase()
	n, err := l.w.Write(p)
	t.open = p[len(p)-1] != '\n'
	t.draw()
	return n, err
}

// Flush flushes the stream.
func (l *terminalLines) Flush() error { return flush(l.w) }

// statusText makes s one line of printable text: escape sequences and control
// characters go, and line breaks and tabs become spaces.
func statusText(s string) string {
	s = Clean(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
	}
	return s
}

// clipColumns cuts s to at most n columns, the last one "…" when something was cut.
func clipColumns(s string, n int) string {
	if columns(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	used := 0
	for i, r := range s {
		w := runeColumns(r)
		if used+w > n-1 {
			return s[:i] + "…"
		}
		used += w
	}
	return s
}

// columns is the width of s on a terminal, counting each wide character as two.
func columns(s string) int {
	n := 0
	for _, r := range s {
		n += runeColumns(r)
	}
	return n
}

// runeColumns is the columns r takes: two for the East Asian wide and full-width
// characters and emoji, one otherwise (combining marks are counted too, which can only
// make a line shorter than it could be, never wrap it).
func runeColumns(r rune) int {
	switch {
	case r < 0x1100:
		return 1
	case r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf, r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff,
		r >= 0xfe30 && r <= 0xfe4f, r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1faff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// ptyColumns is the width of the test terminal.
const ptyColumns = 100

// openPTY opens a pseudo-terminal of ptyColumns columns: the master end the test reads,
// the slave end the program writes to.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	require.NoError(t, err, "posix_openpt")
	master = os.NewFile(uintptr(mfd), "/dev/ptmx")
	t.Cleanup(func() { _ = master.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0), "unlockpt")
	n, err := unix.IoctlGetInt(mfd, unix.TIOCGPTN)
	require.NoError(t, err, "ptsname")
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = slave.Close() })
	require.NoError(t, unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: ptyColumns}))
	return master, slave
}

// runOnPTY runs agentrun with stderr on a pseudo-terminal and stdout there too, or in
// the file stdout; it returns every byte the terminal received and the exit code.
func runOnPTY(t *testing.T, args []string, stdout *os.File) ([]byte, int) {
	t.Helper()
	master, slave := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentrunBin(t), args...)
	// Colour is left to each stream's terminal: no NO_COLOR here.
	for _, kv := range baseEnv(t, "TERM=xterm-256color") {
		if !strings.HasPrefix(kv, "NO_COLOR=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdout, cmd.Stderr = slave, slave
	if stdout != nil {
		cmd.Stdout = stdout
	}
	require.NoError(t, cmd.Start())
	_ = slave.Close() // the child holds the only copy: reads end when it exits
	read := make(chan []byte)
	go func() {
		var all bytes.Buffer
		_, err := io.Copy(&all, master)
		if !errors.Is(err, unix.EIO) { // the end of a pty whose slave closed
			t.Errorf("read the terminal: %v", err)
		}
		read <- all.Bytes()
	}()
	out := <-read
	code := 0
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		code = ee.ExitCode()
	}
	return out, code
}

// screen is a small terminal model: rows of text without end (the scrollback), a cursor,
// carriage return, line feed, erase to the end of the row (ESC [ K) and wrapping at the
// width. Colours (SGR) are skipped; any other escape sequence fails the test. Every row
// erased is kept in seen: what a person saw in it before.
type screen struct {
	t       *testing.T
	width   int
	rows    [][]rune
	row     int
	col     int
	seen    []string
	wrapped []string // rows that overflowed the width
}

func newScreen(t *testing.T, width int) *screen {
	return &screen{t: t, width: width, rows: [][]rune{nil}}
}

func (s *screen) play(b []byte) {
	text := string(b)
	for i := 0; i < len(text); {
		switch c := text[i]; c {
		case '\r':
			s.col = 0
			i++
		case '\n':
			s.lineFeed()
			i++
		case '\t':
			s.col = min((s.col/8+1)*8, s.width-1)
			i++
		case 0x1b:
			i = s.escape(text, i)
		default:
			r, size := utf8.DecodeRuneInString(text[i:])
			s.put(r)
			i += size
		}
	}
}

// escape interprets the escape sequence at text[i] and returns the index after it.
func (s *screen) escape(text string, i int) int {
	require.Less(s.t, i+1, len(text), "a lone ESC")
	require.Equal(s.t, byte('['), text[i+1], "only CSI sequences: %q", text[i:min(i+8, len(text))])
	j := i + 2
	for j < len(text) && (text[j] < 0x40 || text[j] > 0x7e) {
		j++
	}
	require.Less(s.t, j, len(text), "an unfinished escape sequence")
	params := text[i+2 : j]
	switch text[j] {
	case 'm': // colour: not part of the text
	case 'K':
		require.Contains(s.t, []string{"", "0"}, params, "erase to the end of the row only")
		if line := s.rows[s.row]; s.col == 0 && len(line) > 0 {
			s.seen = append(s.seen, string(line))
		}
		if s.col < len(s.rows[s.row]) {
			s.rows[s.row] = s.rows[s.row][:s.col]
		}
	default:
		s.t.Fatalf("unexpected escape sequence %q", text[i:j+1])
	}
	return j + 1
}

func (s *screen) lineFeed() {
	s.row++
	if s.row == len(s.rows) {
		s.rows = append(s.rows, nil)
	}
}

func (s *screen) put(r rune) {
	if s.col >= s.width {
		s.wrapped = append(s.wrapped, string(s.rows[s.row]))
		s.lineFeed()
		s.col = 0
	}
	line := s.rows[s.row]
	for len(line) <= s.col {
		line = append(line, ' ')
	}
	line[s.col] = r
	s.rows[s.row] = line
	s.col++
}

// lines returns the rows, without trailing blanks.
func (s *screen) lines() []string {
	out := make([]string, len(s.rows))
	for i, r := range s.rows {
		out[i] = strings.TrimRight(string(r), " ")
	}
	return out
}

// statusText finds the status line; statusRow is a row that is a status line and nothing
// else.
var (
	statusText = regexp.MustCompile(`\d+/\d+ done, \d+ running`)
	statusRow  = regexp.MustCompile(`^\d+/\d+ done, \d+ running, \d+ failed, \$\d+\.\d{4}, \d+s(, ETA \d+s)?( │ [^\[]*)?$`)
)

var displayKeys = []string{"write", "look.r1", "look.r2"}

// TestLiveDisplaySharedTerminal runs agentrun with stdout and stderr on one terminal and
// reads the screen it leaves: the transcript, the log and the status line never share a
// row, no old status line is left, each session's finish shows once, and the status line
// showed what each session did and an ETA, within the width.
func TestLiveDisplaySharedTerminal(t *testing.T) {
	spec := specDir(t, smallSpec("grep -q hello note.txt"))
	out := filepath.Join(filepath.Dir(spec), "out")
	raw, code := runOnPTY(t, []string{"run", spec, "--out", out}, nil)
	require.Equal(t, 0, code, "%q", raw)

	scr := newScreen(t, ptyColumns)
	scr.play(raw)
	lines := scr.lines()
	screenText := strings.Join(lines, "\n")
	var statuses []string
	for _, l := range lines {
		if statusText.MatchString(l) {
			statuses = append(statuses, l)
			assert.Regexp(t, statusRow, l, "a status line alone in its row")
		}
	}
	require.Len(t, statuses, 1, "only the last status stays on the screen:\n%s", screenText)
	assert.Regexp(t, `^3/3 done, 0 running, 0 failed, \$0\.0000, \d+s$`, statuses[0])
	for _, key := range displayKeys {
		finish := regexp.MustCompile(`(?m)^\[` + regexp.QuoteMeta(key) + `\] ✓ success · `)
		assert.Len(t, finish.FindAllString(screenText, -1), 1, "%s finished once:\n%s", key, screenText)
		assert.NotContains(t, screenText, "✓ "+key+" success", "%s: no second report of the finish", key)
	}
	assert.Regexp(t, `(?m)^\S+\s+INFO\s+no API key or base URL configured`, screenText, "the log passes around the status line")
	assert.Regexp(t, `(?m)^SESSION +STATUS`, screenText, "the summary")
	assert.Contains(t, string(raw), "\x1b[32m", "colour on the terminal")

	var activity, tools, eta bool
	toolRow, etaRow := regexp.MustCompile(`: (Write|Bash)\b`), regexp.MustCompile(`, ETA \d+s │ `)
	for _, l := range scr.seen {
		if !statusText.MatchString(l) {
			continue
		}
		assert.Regexp(t, statusRow, l, "a status line drawn alone")
		assert.Less(t, len([]rune(l)), ptyColumns, "the status line fits the width: %q", l)
		activity = activity || strings.Contains(l, ": waiting for model")
		tools = tools || toolRow.MatchString(l)
		eta = eta || etaRow.MatchString(l)
	}
	assert.True(t, activity, "a session waiting for the model: %q", scr.seen)
	assert.True(t, tools, "the tool a session runs: %q", scr.seen)
	assert.True(t, eta, "an ETA once a session finished: %q", scr.seen)
	for _, w := range scr.wrapped {
		assert.NotRegexp(t, statusText, w, "the status line never wraps")
	}
}

// TestLiveDisplayStdoutToFile runs agentrun with stdout in a file and stderr on a
// terminal: the file is plain text, and the terminal shows the status line and one line
// per finished session.
func TestLiveDisplayStdoutToFile(t *testing.T) {
	spec := specDir(t, smallSpec("grep -q hello note.txt"))
	dir := filepath.Dir(spec)
	f, err := os.Create(filepath.Join(dir, "log"))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	raw, code := runOnPTY(t, []string{"run", spec, "--out", filepath.Join(dir, "out")}, f)
	require.Equal(t, 0, code, "%q", raw)

	log, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	assert.NotContains(t, string(log), "\x1b", "no escape sequences in the file")
	assert.NotContains(t, string(log), "done, ", "no status line in the file")
	assert.Contains(t, string(log), "[write] ⏺ Write(note.txt)")

	scr := newScreen(t, ptyColumns)
	scr.play(raw)
	screenText := strings.Join(scr.lines(), "\n")
	assert.Contains(t, string(raw), "\x1b[32m✓\x1b[0m", "colour on the terminal")
	for _, key := range displayKeys {
		finish := regexp.MustCompile(`(?m)^✓ ` + regexp.QuoteMeta(key) + ` success · `)
		assert.Len(t, finish.FindAllString(screenText, -1), 1, "%s finished once:\n%s", key, screenText)
	}
	var statuses []string
	for _, l := range scr.lines() {
		if statusText.MatchString(l) {
			statuses = append(statuses, l)
		}
	}
	assert.Equal(t, 1, len(statuses), "only the last status stays:\n%s", screenText)
	assert.NotContains(t, screenText, "[write] ", "the transcript is in the file, not on the terminal")
}

// TestColorOn checks the colour conventions, for a stream on a terminal and one that is
// not.
func TestColorOn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env       []string
		tty, pipe bool
	}{
		{env: nil, tty: true, pipe: false},
		{env: []string{"NO_COLOR=1"}, tty: false, pipe: false},
		{env: []string{"NO_COLOR="}, tty: true, pipe: false},
		{env: []string{"FORCE_COLOR=1"}, tty: true, pipe: true},
		{env: []string{"FORCE_COLOR=0"}, tty: true, pipe: false},
		{env: []string{"FORCE_COLOR=false"}, tty: true, pipe: false},
		{env: []string{"FORCE_COLOR=1", "NO_COLOR=1"}, tty: false, pipe: false},
		{env: []string{"TERM=dumb"}, tty: false, pipe: false},
		{env: []string{"TERM=dumb", "FORCE_COLOR=3"}, tty: true, pipe: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.env), func(t *testing.T) {
			a := &App{Env: tt.env}
			assert.Equal(t, tt.tty, a.colorOn(true), "a terminal")
			assert.Equal(t, tt.pipe, a.colorOn(false), "a pipe or file")
		})
	}
}

package sink_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/sink"
)

// tagged records the writes of two streams on one terminal in order, each write tagged
// with its stream.
type tagged struct {
	mu  *sync.Mutex
	log *[]string
	tag string
}

func (w tagged) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	*w.log = append(*w.log, w.tag+":"+string(p))
	return len(p), nil
}

func TestTerminal(t *testing.T) {
	tests := []struct {
		name  string
		width int
		do    func(term *sink.Terminal, out, logs func(string))
		want  []string
	}{
		{
			name: "a line passes around the status", width: 80,
			do: func(term *sink.Terminal, out, _ func(string)) {
				term.SetStatus("1/2 done")
				out("[a] hello\n")
			},
			want: []string{"err:\r\x1b[K1/2 done", "err:\r\x1b[K", "out:[a] hello\n", "err:\r\x1b[K1/2 done"},
		},
		{
			name: "no status: lines alone", width: 80,
			do: func(_ *sink.Terminal, out, logs func(string)) {
				out("[a] one\n")
				logs("INFO two\n")
			},
			want: []string{"out:[a] one\n", "err:INFO two\n"},
		},
		{
			name: "an unfinished line holds the status back", width: 80,
			do: func(term *sink.Terminal, out, _ func(string)) {
				term.SetStatus("s1")
				out("abc")
				term.SetStatus("s2")
				out("def\n")
			},
			want: []string{"err:\r\x1b[Ks1", "err:\r\x1b[K", "out:abc", "out:def\n", "err:\r\x1b[Ks2"},
		},
		{
			name: "the same status is not drawn again", width: 80,
			do: func(term *sink.Terminal, _, _ func(string)) {
				term.SetStatus("same")
				term.SetStatus("same")
			},
			want: []string{"err:\r\x1b[Ksame"},
		},
		{
			name: "an empty status erases it", width: 80,
			do: func(term *sink.Terminal, out, _ func(string)) {
				term.SetStatus("s")
				term.SetStatus("")
				out("x\n")
			},
			want: []string{"err:\r\x1b[Ks", "err:\r\x1b[K", "out:x\n"},
		},
		{
			name: "finish leaves the last status as a line", width: 80,
			do: func(term *sink.Terminal, out, _ func(string)) {
				term.SetStatus("3/3 done")
				term.Finish()
				out("summary\n")
			},
			want: []string{"err:\r\x1b[K3/3 done", "err:\n", "out:summary\n"},
		},
		{
			name: "finish after an unfinished line keeps the status off", width: 80,
			do: func(term *sink.Terminal, out, _ func(string)) {
				term.SetStatus("s")
				out("abc")
				term.Finish()
				out("def\n")
			},
			want: []string{"err:\r\x1b[Ks", "err:\r\x1b[K", "out:abc", "out:def\n"},
		},
		{
			name: "cut to one column less than the width", width: 10,
			do:   func(term *sink.Terminal, _, _ func(string)) { term.SetStatus("0123456789abc") },
			want: []string{"err:\r\x1b[K01234567…"},
		},
		{
			name: "a status that fits is whole", width: 10,
			do:   func(term *sink.Terminal, _, _ func(string)) { term.SetStatus("012345678") },
			want: []string{"err:\r\x1b[K012345678"},
		},
		{
			name: "wide characters count two columns", width: 8,
			do:   func(term *sink.Terminal, _, _ func(string)) { term.SetStatus("ab漢字かなkana") },
			want: []string{"err:\r\x1b[Kab漢字…"},
		},
		{
			name: "unknown width: no cut", width: 0,
			do:   func(term *sink.Terminal, _, _ func(string)) { term.SetStatus(strings.Repeat("x", 300)) },
			want: []string{"err:\r\x1b[K" + strings.Repeat("x", 300)},
		},
		{
			name: "control characters and escapes leave the status", width: 80,
			do:   func(term *sink.Terminal, _, _ func(string)) { term.SetStatus("a\x1b[2Jb\rc\nd\te\x07") },
			want: []string{"err:\r\x1b[Kabc d e"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var log []string
			stderr := tagged{mu: &mu, log: &log, tag: "err"}
			term := sink.NewTerminal(stderr, func() int { return tt.width })
			stdout, logs := term.Lines(tagged{mu: &mu, log: &log, tag: "out"}), term.Lines(stderr)
			write := func(w interface{ Write([]byte) (int, error) }) func(string) {
				return func(s string) {
					n, err := w.Write([]byte(s))
					assert.NoError(t, err)
					assert.Equal(t, len(s), n)
				}
			}
			tt.do(term, write(stdout), write(logs))
			assert.Equal(t, tt.want, log)
		})
	}
}

// TestTerminalConcurrent writes from many goroutines; with -race. Every line must come
// out whole and right after an erase of the status line.
func TestTerminalConcurrent(t *testing.T) {
	var buf bytes.Buffer
	w := sink.NewSyncWriter(&buf)
	term := sink.NewTerminal(w, func() int { return 40 })
	out := term.Lines(w)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				term.SetStatus(strings.Repeat("s", g+i%3+1))
				_, err := out.Write([]byte("line\n"))
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	term.Finish()
	for _, row := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		// A row is what lies between newlines: erased statuses, then one line (or the
		// final status).
		last := row[strings.LastIndex(row, "\r\x1b[K")+len("\r\x1b[K"):]
		assert.Regexp(t, `^(line|s+)$`, last, "row %q", row)
	}
	assert.Equal(t, 400, strings.Count(buf.String(), "line\n"))
}

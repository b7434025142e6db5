package worker

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// BenchmarkStderrCopy copies a worker's stderr, a line and its end, from a pipe into
// its tail as both kinds of worker do (io.Copy, os/exec's through it): B/op is what the
// copy allocates, and holds for as long as the worker runs.
func BenchmarkStderrCopy(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		_, _ = w.WriteString("worker: a line of its stderr\n")
		_ = w.Close()
		t := &tailBuffer{max: 8 << 10}
		if _, err := io.Copy(t, r); err != nil {
			b.Fatal(err)
		}
		_ = r.Close()
	}
}

// TestTailBufferKeepsTheHead writes a worker's crash as its stderr has it, the cause on
// the first line and kilobytes of goroutine dump after it: the text kept has the cause
// and the end, with what was left out between them said. (It kept only the end, and a
// worker that died under a fork bomb said no more than its last goroutines.)
func TestTailBufferKeepsTheHead(t *testing.T) {
	b := &tailBuffer{max: 8 << 10}
	_, _ = b.Write([]byte("runtime: failed to create new OS thread\nfatal error: newosproc\n"))
	for i := range 500 {
		_, _ = fmt.Fprintf(b, "goroutine %d [select]:\n\truntime.gopark(...)\n", i)
	}
	_, _ = b.Write([]byte("rip    0x7f2b64f31eec\n"))
	got := b.String()
	assert.True(t, strings.HasPrefix(got, "runtime: failed to create new OS thread\nfatal error: newosproc\n"), "%.200s", got)
	assert.True(t, strings.HasSuffix(got, "rip    0x7f2b64f31eec\n"))
	assert.True(t, strings.Contains(got, " bytes left out ...]\n"), "no mark of what was left out")
	assert.LessOrEqual(t, len(got), 8<<10+64)
	short := &tailBuffer{max: 8 << 10}
	_, _ = short.Write([]byte("worker: no config from stage 1\n"))
	assert.Equal(t, "worker: no config from stage 1\n", short.String())
}

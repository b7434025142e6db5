package transporttest

import (
	"bytes"
	"io"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
)

// BenchStream is what every dialect's BenchmarkDecode decodes, each in its own wire
// format, so that their figures compare: Deltas text deltas of token size (some with
// escapes and multibyte characters), then one tool call whose input comes in
// ArgFragments fragments of ArgFragment.
const (
	BenchDeltas       = 5000
	BenchArgFragments = 200
	BenchArgFragment  = "aaaaaaaaaaaaaaaaaaaaaaaa"
)

// BenchText returns the text of delta i of the benchmark stream, JSON-escaped (its
// backslashes are escapes, its quotes escaped).
func BenchText(i int) string {
	words := []string{"The", " decoder", " reads", " each", " event", ",", " then", " emits", " a", " message", ".\\n",
		" Grüße", " —", " `close(ch)`", " \\\"quoted\\\"", " 世界", " tab\\t", " 42", " tokens", " per", " second"}
	w := words[i%len(words)]
	if i%7 == 3 {
		w += words[(i+5)%len(words)]
	}
	return w
}

// BenchDecode decodes body b.N times with decoders from newDecoder and reports, besides
// the wall-clock MB/s of SetBytes, the allocations and nanoseconds per SSE event (the
// body has events of them) and MB per CPU second (user and system time of the whole
// process, the garbage collector included), the figure that holds on a loaded machine.
// Every pass must end cleanly with BenchDeltas texts and one tool call.
func BenchDecode(b *testing.B, body []byte, events int, newDecoder func(io.Reader) transport.Decoder) {
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	for b.Loop() {
		d := newDecoder(bytes.NewReader(body))
		texts, calls := 0, 0
		for d.Next() {
			switch d.Message().Kind {
			case protocol.KindText:
				texts++
			case protocol.KindToolCall:
				calls++
			default:
				// the other kinds are not counted
			}
		}
		if d.Err() != nil || texts != BenchDeltas || calls != 1 {
			b.Fatalf("%d texts, %d tool calls, err %v", texts, calls, d.Err())
		}
	}
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*events), "allocs/event")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
	if cpu > 0 {
		b.ReportMetric(float64(len(body))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package main

import (
	"bytes"
	"runtime"
	"time"

	"go.uber.org/zap"
)

// goroutineSettle is how long the goroutine report waits for goroutines that are
// already ending, such as the read and write loops of HTTP connections just closed.
const goroutineSettle = 2 * time.Second

// processGoroutines are functions whose goroutines live as long as the process, not a
// run: os/signal's receiving loop, started by the first signal.Notify and never
// stopped.
var processGoroutines = [][]byte{
	[]byte("os/signal.signal_recv"),
	[]byte("os/signal.loop"),
}

// reportGoroutines logs, at debug level, the goroutines still alive once a run has
// returned and its providers are closed: every one of them is a leak, since nothing
// should run after the summaries are written. It is the hook the end-to-end tests use
// to prove that a run leaves no goroutine behind.
func reportGoroutines(log *zap.Logger) {
	if !log.Core().Enabled(zap.DebugLevel) {
		return
	}
	left := lingeringGoroutines(goroutineSettle)
	log.Debug("goroutines left after the run", zap.Int("count", len(left)), zap.Strings("stacks", left))
}

// lingeringGoroutines returns the stacks of the goroutines other than the caller's and
// the process-long ones, waiting up to settle for them to end.
func lingeringGoroutines(settle time.Duration) []string {
	deadline := time.Now().Add(settle)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		left := otherGoroutines()
		if len(left) == 0 || !time.Now().Before(deadline) {
			return left
		}
		<-tick.C
	}
}

// otherGoroutines lists the stacks of every goroutine but the current one (which
// runtime.Stack prints first) and the process-long ones.
func otherGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	blocks := bytes.Split(bytes.TrimSpace(buf), []byte("\n\n"))
	var out []string
	for _, b := range blocks[1:] {
		if !processLong(b) {
			out = append(out, string(b))
		}
	}
	return out
}

func processLong(stack []byte) bool {
	for _, fn := range processGoroutines {
		if bytes.Contains(stack, fn) {
			return true
		}
	}
	return false
}

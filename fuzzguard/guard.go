// Package fuzzguard gives every fuzz input a deadline, so that an input that makes a
// parser or decoder run for seconds fails the fuzz run, with the input saved by the Go
// fuzzer under testdata/fuzz/<Target>/, instead of silently collapsing its rate.
package fuzzguard

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

// Limit is the time one input may take. Every target runs in well under a millisecond
// per input; a second, with room for -race and a loaded machine, is a stall.
// AGENTRUN_FUZZ_DEADLINE (a Go duration) overrides it.
var Limit = limitFromEnv()

func limitFromEnv() time.Duration {
	if v := os.Getenv("AGENTRUN_FUZZ_DEADLINE"); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return 2 * time.Second
}

// Run runs body on the calling (test) goroutine, so body may call t.Fatal, with a
// watchdog goroutine that Run stops and waits for before it returns, also when body
// exits by t.FailNow. If body is still running after Limit the watchdog panics with
// every goroutine's stack: the process dies, and the fuzzer records the input as a
// crasher (under plain go test, the seed that stalls fails the package).
func Run(size int, body func()) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		timer := time.NewTimer(Limit)
		defer timer.Stop()
		select {
		case <-stop:
		case <-timer.C:
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			panic(fmt.Sprintf("fuzzguard: an input of %d bytes still runs after %v (a superlinear path); goroutines:\n%s",
				size, Limit, buf))
		}
	}()
	defer wg.Wait()
	defer close(stop)
	body()
}

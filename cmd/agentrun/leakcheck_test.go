package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

// leakBin is this package's test binary, built under the name leakBinName without
// the race detector: run as a subprocess it is the agentrun
// command (cli) and then a report, on stderr, of the goroutines still alive once the
// command returned. Each of them is a leak, since nothing a run starts may outlive it;
// assertNoGoroutines reads the report. The tests that check for leaks run it instead of
// agentrunBin, so that the agentrun binary itself carries no such hook.
//
// leakBinName is the file name of leakBin, by which TestMain knows to be the command.
const leakBinName = "agentrun"

// leakSettle is how long the report waits for goroutines that are already ending, such
// as the read and write loops of HTTP connections just closed.
const leakSettle = 2 * time.Second

// goroutineReport is the message of the report's JSON line.
const goroutineReport = "goroutines left after the run"

// leakReport is the report's line: leaks is goleak's list of the goroutines left, ""
// when there are none.
type leakReport struct {
	Msg   string `json:"msg"`
	Leaks string `json:"leaks"`
}

// leakCheckedCLI runs the command, then writes the report of the goroutines it left
// and returns the command's exit code.
func leakCheckedCLI() int {
	code, report := leakChecked(cli, leakSettle)
	line, err := json.Marshal(report)
	if err != nil {
		panic(err) // a struct of two strings always marshals
	}
	_, _ = fmt.Fprintf(os.Stderr, "%s\n", line)
	return code
}

// leakChecked calls run and returns its result and the report of the goroutines alive
// once it returned that were not before it (beyond the process-long ones goleak knows,
// such as os/signal's loop), waiting up to settle for those already ending.
func leakChecked(run func() int, settle time.Duration) (int, leakReport) {
	before := goleak.IgnoreCurrent()
	code := run()
	deadline := time.Now().Add(settle)
	err := goleak.Find(before)
	for err != nil && time.Now().Before(deadline) {
		err = goleak.Find(before) // each Find retries for a while before it reports
	}
	report := leakReport{Msg: goroutineReport}
	if err != nil {
		report.Leaks = err.Error()
	}
	return code, report
}

// parkedForReport says it runs, then blocks until release is closed; its name marks it
// in the report.
func parkedForReport(running chan<- struct{}, release <-chan struct{}) {
	close(running)
	<-release
}

// TestLeakReport checks the report: it lists a goroutine that run left blocked, and
// not one that was ending as run returned, nor the goroutines alive before. It is not
// parallel, so that no other test starts goroutines while it looks.
func TestLeakReport(t *testing.T) {
	running, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	code, report := leakChecked(func() int {
		wg.Go(func() { parkedForReport(running, release) })
		<-running
		return 3
	}, 0)
	assert.Equal(t, 3, code)
	assert.Equal(t, goroutineReport, report.Msg)
	assert.Contains(t, report.Leaks, "parkedForReport", "a blocked goroutine is reported")

	_, report = leakChecked(func() int {
		close(release) // parkedForReport ends, unwaited for
		return 0
	}, leakSettle)
	assert.Empty(t, report.Leaks, "a goroutine that ends is not reported")
	wg.Wait()
}

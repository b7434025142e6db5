// Package testexit sets how a test binary runs and ends: how many of its parallel tests
// run at once, and its exit with its code, in a race build without the race runtime's
// one-second wait at exit, which every race-built test binary of the suite would
// otherwise pay.
package testexit

import (
	"os"
	"strings"
)

// Exit ends the process with code, as the Cleanup of goleak.VerifyTestMain. In a race
// build it skips the race runtime's finalisation: by then the testing package has
// failed every test during which a race was reported, and the wait (GORACE's
// atexit_sleep_ms, a second by default) is for goroutines that goleak has just shown
// are gone.
func Exit(code int) { exit(code) }

// QuickExit is the GORACE option under which a race-built binary exits without that
// wait: the tests give it to the copies of their test binary they start (scenarios,
// servers), which testexit.Exit does not end.
const QuickExit = "atexit_sleep_ms=0"

// QuickChildren adds QuickExit to this process's GORACE, for the children that inherit
// its environment; the race runtime read the variable at start, so this process is
// unaffected.
func QuickChildren() {
	_ = os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" "+QuickExit))
}

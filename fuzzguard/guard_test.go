package fuzzguard

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/testexit"
)

func TestMain(m *testing.M) {
	if os.Getenv("FUZZGUARD_STALL") == "1" {
		Limit = 50 * time.Millisecond
		block := make(chan struct{})
		Run(7, func() { <-block })
		os.Exit(0) // not reached: the watchdog panics
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit))
}

// TestRunReturns checks that a fast body runs once and leaves no goroutine behind.
func TestRunReturns(t *testing.T) {
	calls := 0
	Run(1, func() { calls++ })
	assert.Equal(t, 1, calls)
}

// TestRunStall checks the effect of a stalled body: the process dies with the
// input's size and the stuck goroutine's stack in its output.
func TestRunStall(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "FUZZGUARD_STALL=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "an input of 7 bytes still runs after 50ms")
	assert.Contains(t, string(out), "fuzzguard.TestMain")
}

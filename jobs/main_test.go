package jobs

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/testexit"
)

// TestMain checks that no test leaves a goroutine behind (the pipe tests start writers
// and a watchdog of Load).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit)) }

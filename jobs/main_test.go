package jobs

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (the pipe tests start writers
// and a watchdog of Load).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

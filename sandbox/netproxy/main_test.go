package netproxy

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/testexit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit))
}

package relay

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/testexit"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild(os.Getenv(childEnv)))
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit))
}

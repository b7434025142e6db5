package testexit

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const childEnv = "TESTEXIT_CHILD_CODE"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		Exit(7)
	}
	Exit(m.Run())
}

// TestExitCode runs this binary again to exit through Exit: the code reaches the
// parent.
func TestExitCode(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=7")
	err := cmd.Run()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	assert.Equal(t, 7, exit.ExitCode())
}

// TestQuickChildren checks that QuickExit joins the options GORACE already has.
func TestQuickChildren(t *testing.T) {
	t.Setenv("GORACE", "halt_on_error=1")
	QuickChildren()
	assert.Equal(t, "halt_on_error=1 "+QuickExit, os.Getenv("GORACE"))
	t.Setenv("GORACE", "")
	QuickChildren()
	assert.Equal(t, QuickExit, os.Getenv("GORACE"))
}

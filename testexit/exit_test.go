package testexit

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const childEnv = "TESTEXIT_CHILD_CODE"

// parallelEnv makes this binary's TestMain call Parallel(5), for TestParallel.
const parallelEnv = "TESTEXIT_PARALLEL_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		Exit(7)
	}
	if os.Getenv(parallelEnv) != "" {
		Parallel(5)
	}
	Exit(m.Run())
}

// TestParallel runs this binary again with Parallel(5) in its TestMain: the tests then
// run five at once, unless the command line says otherwise.
func TestParallel(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		args []string
		want string
	}{
		"default":      {want: "parallel=5"},
		"command line": {args: []string{"-test.parallel=3"}, want: "parallel=3"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestParallelChild$", "-test.v"}, tt.args...)...)
			cmd.Env = append(os.Environ(), parallelEnv+"=1")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), tt.want)
		})
	}
}

// TestParallelChild prints the -test.parallel its binary runs with, for TestParallel.
func TestParallelChild(t *testing.T) {
	if os.Getenv(parallelEnv) == "" {
		t.Skip("run by TestParallel")
	}
	t.Logf("parallel=%s", flag.Lookup("test.parallel").Value)
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

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/testexit"
)

// childEnv names the scenario a re-executed test binary runs instead of the tests.
const childEnv = "SANDBOX_TEST_CHILD"

// childScenarios are the irreversible experiments (seccomp, capabilities, rlimits) run
// in a fresh copy of the test binary; other _test files add theirs from init. A
// scenario reports with report and returns the exit code.
var childScenarios = map[string]func() int{}

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		run, ok := childScenarios[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown child scenario %q\n", name)
			os.Exit(2)
		}
		os.Exit(run())
	}
	testexit.QuickChildren() // the scenarios run in copies of this binary
	goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit))
}

// report writes one "key=value" line for the parent to check.
func report(key string, value any) {
	fmt.Printf("%s=%v\n", key, value)
}

// runChild runs scenario in a fresh copy of the test binary and returns what it
// reported, key by key, failing the test unless it exits 0.
func runChild(t *testing.T, scenario string, env ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+scenario), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		require.NoError(t, err, "child %s failed; stdout:\n%s\nstderr:\n%s", scenario, out, stderr.String())
	}
	require.NoError(t, err, "starting child %s", scenario)
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			got[k] = v
		}
	}
	return got
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestActionShellcheck runs shellcheck over every script of action.yml, as actionlint
// does for the workflows' scripts: actionlint reads workflows, not action metadata.
// Without shellcheck the test skips, unless AGENTRUN_REQUIRE_TOOLS is set (as .ci/run
// does).
func TestActionShellcheck(t *testing.T) {
	t.Parallel()
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		if os.Getenv("AGENTRUN_REQUIRE_TOOLS") != "" {
			t.Fatal("shellcheck is not installed (apt-get install shellcheck) and AGENTRUN_REQUIRE_TOOLS is set")
		}
		t.Skip("shellcheck is not installed")
	}
	a := loadAction(t)
	checked := 0
	for _, s := range a.Runs.Steps {
		if s.Run == "" {
			continue
		}
		checked++
		t.Run(s.Name, func(t *testing.T) {
			require.Equal(t, "bash", s.Shell)
			script := filepath.Join(t.TempDir(), "step.sh")
			// GitHub runs a bash step as bash --noprofile --norc -eo pipefail {0}.
			require.NoError(t, os.WriteFile(script, []byte("#!/usr/bin/env bash\nset -eo pipefail\n"+s.Run), 0o644))
			out, err := exec.Command(sc, "--shell=bash", "--severity=style", script).CombinedOutput()
			assert.NoError(t, err, "shellcheck on step %q:\n%s", s.Name, out)
		})
	}
	assert.Positive(t, checked)
}

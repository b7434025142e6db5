package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResumeRefusesOtherModel checks that --resume and --rerun-failed keep no earlier
// result of another resolved provider or model: a summary must not mix them.
func TestResumeRefusesOtherModel(t *testing.T) {
	t.Parallel()
	spec, out := noteSpec(t, "repeat: 2")
	run := func(env []string, args ...string) outcome {
		return agentrun(t, invocation{args: append([]string{"run", spec, "--out", out, "--progress", "off"}, args...), env: baseEnv(t, env...)})
	}
	o := run(nil, "--model", "alpha")
	require.Equal(t, 0, o.code, o.stderr)
	before := results(t, out)
	require.Len(t, before, 2)

	tests := map[string]struct {
		env, args  []string
		wantStderr []string
	}{
		"another model": {
			args:       []string{"--resume", "--model", "beta"},
			wantStderr: []string{"--resume", "note.r1", "model alpha", "model beta", "--out"},
		},
		"another provider": {
			// A keyless compatible server: nothing connects to it before the refusal.
			env:        []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:9/v1"},
			args:       []string{"--rerun-failed", "--model", "alpha"},
			wantStderr: []string{"--rerun-failed", "provider scripted", "provider anthropic"},
		},
		"a dry run": {
			args:       []string{"--resume", "--dry-run"},
			wantStderr: []string{"model alpha", "model scripted"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			o := run(tt.env, tt.args...)
			assert.Equal(t, 2, o.code, o.stderr)
			for _, want := range tt.wantStderr {
				assert.Contains(t, o.stderr, want)
			}
			assert.Equal(t, before, results(t, out), "the earlier results are untouched")
		})
	}

	o = run(nil, "--resume", "--model", "alpha")
	require.Equal(t, 0, o.code, o.stderr)
	assert.Equal(t, before, results(t, out), "the same model keeps every result")
}

// TestRetryErrors checks that --retry-errors runs again the sessions whose earlier
// failure is of a listed class and keeps the rest, so that a provider outage is run
// again without running genuine check failures again.
func TestRetryErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "steps.yaml", noteScript)
	outage := writeFile(t, dir, "outage.yaml", "steps:\n  - text: never\n    fault: {status: 503, times: 1000}\n")
	writeFile(t, dir, "ws/README.md", "# workspace\n")
	spec := writeFile(t, dir, "jobs.yaml", `version: 1
defaults: {script: steps.yaml, workspace: {dir: ws}}
jobs:
  - {id: outage, prompt: Write a note., script: outage.yaml}
  - {id: checked, prompt: Write a note., checks: [{name: never, run: "exit 1"}]}
  - {id: fine, prompt: Write a note.}
`)
	out := filepath.Join(dir, "out")
	run := func(args ...string) outcome {
		return agentrun(t, invocation{args: append([]string{"run", spec, "--out", out, "--progress", "off"}, args...)})
	}
	o := run()
	require.Equal(t, 1, o.code, o.stderr)
	first := results(t, out)
	require.Equal(t, "error_provider", first["outage"][1])
	require.Equal(t, "error_checks", first["checked"][1])
	require.Equal(t, "success", first["fine"][1])
	// The outage is over.
	writeFile(t, dir, filepath.Base(outage), noteScript)

	t.Run("mistakes", func(t *testing.T) {
		for args, want := range map[[3]string]string{
			{"--retry-errors", "provder", ""}:                   `--retry-errors: unknown failure class "provder"; did you mean "provider"?`,
			{"--retry-errors", "success", ""}:                   `--retry-errors: "success" is not a failure`,
			{"--retry-errors", "checks", "--rerun-failed"}:      "--retry-errors and --rerun-failed exclude each other",
			{"--retry-errors", "provider,,timeout", "--resume"}: `--retry-errors: "provider,,timeout": empty class`,
		} {
			var extra []string
			for _, a := range args {
				if a != "" {
					extra = append(extra, a)
				}
			}
			o := run(extra...)
			assert.Equal(t, 2, o.code, o.stderr)
			assert.Contains(t, o.stderr, want)
		}
		assert.Equal(t, first, results(t, out))
	})

	o = run("--resume")
	require.Equal(t, 1, o.code, o.stderr)
	assert.Equal(t, first, results(t, out), "by default only cancelled and crashed sessions run again")

	o = run("--retry-errors", "provider,timeout,inactivity")
	require.Equal(t, 1, o.code, o.stderr)
	after := results(t, out)
	assert.Equal(t, "success", after["outage"][1], "the provider failure ran again")
	assert.NotEqual(t, first["outage"][0], after["outage"][0])
	assert.Equal(t, first["checked"], after["checked"], "the check failure stands")
	assert.Equal(t, first["fine"], after["fine"])

	var sum struct {
		Totals struct{ Passed, Failed, Reused int }
	}
	readJSON(t, filepath.Join(out, "summary.json"), &sum)
	assert.Equal(t, 2, sum.Totals.Passed)
	assert.Equal(t, 1, sum.Totals.Failed)
	assert.Equal(t, 2, sum.Totals.Reused)
}

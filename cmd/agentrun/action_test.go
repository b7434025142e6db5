package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
)

// TestActionMetadata checks action.yml: a composite action whose inputs and outputs are
// documented, whose expressions name inputs and step outputs that exist, that never
// expands an expression inside shell text, and whose agentrun command and outputs
// match what agentrun accepts and writes.
func TestActionMetadata(t *testing.T) {
	t.Parallel()
	a := loadAction(t)
	raw, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	require.NoError(t, err)
	assert.NotEmpty(t, a.Name)
	assert.NotEmpty(t, a.Description)
	require.Equal(t, "composite", a.Runs.Using)
	for _, name := range []string{"jobs", "out", "concurrency", "args", "shard"} {
		assert.Contains(t, a.Inputs, name)
	}
	for name, in := range a.Inputs {
		assert.NotEmpty(t, in.Description, "input %s", name)
	}
	for _, m := range inputRef.FindAllStringSubmatch(string(raw), -1) {
		assert.Contains(t, a.Inputs, m[1], "inputs.%s is not an input", m[1])
	}

	steps := map[string]workflowStep{}
	var invs []deployInvocation
	for i, s := range a.Runs.Steps {
		if s.ID != "" {
			steps[s.ID] = s
		}
		if s.Uses != "" {
			assert.Regexp(t, pinned, s.Uses, "step %d", i)
			continue
		}
		assert.NotEmpty(t, s.Shell, "step %q must declare its shell", s.Name)
		assert.NotContains(t, s.Run, "${{", "step %q: pass values through env, not into the script", s.Name)
		invs = append(invs, shellInvocations("action.yml step "+s.Name, s.Run)...)
	}
	require.Len(t, invs, 1, "the action runs agentrun once")
	assert.Equal(t, "run", invs[0].sub)
	assert.Subset(t, invs[0].flags, []string{"out", "concurrency", "shard"})
	checkInvocations(t, invs)

	written := runnerOutputs(t, exitFailed)
	// A run of one session writes its id and execution file too.
	for k, v := range runnerOutputs(t, exitOK, "--filter", "fix-one") {
		written[k] = v
	}
	written["structured-output"] = "" // written when the session has an output_schema
	for _, name := range []string{"status", "passed", "failed", "total-cost-usd", "summary-json", "report-html"} {
		assert.Contains(t, written, name)
		assert.Contains(t, a.Outputs, name)
	}
	for name, o := range a.Outputs {
		assert.NotEmpty(t, o.Description, "output %s", name)
		m := stepOutput.FindStringSubmatch(o.Value)
		require.NotNil(t, m, "output %s: value %q is not a step output", name, o.Value)
		step, ok := steps[m[1]]
		require.True(t, ok, "output %s: no step with id %s", name, m[1])
		echoed := map[string]bool{}
		for _, e := range echoedOutput.FindAllStringSubmatch(step.Run, -1) {
			echoed[e[1]] = true
		}
		_, byRunner := written[m[2]]
		ranAgentrun := len(shellInvocations("", step.Run)) > 0
		assert.True(t, echoed[m[2]] || ranAgentrun && byRunner, "output %s: step %s does not write %s", name, m[1], m[2])
	}
}

// deployStepEnv evaluates the env of an action step: ${{ inputs.X }} takes inputs["X"]
// or the input's default, ${{ steps.locate.outputs.dir }} the binary's folder, any other
// expression E the value inputs[E].
func deployStepEnv(t *testing.T, a actionMeta, step workflowStep, inputs map[string]string) []string {
	t.Helper()
	expr := regexp.MustCompile(`^\$\{\{\s*([\w.-]+)\s*\}\}$`)
	var env []string
	for k, v := range step.Env {
		m := expr.FindStringSubmatch(v)
		require.NotNil(t, m, "env %s: the test knows no value for %q", k, v)
		name, isInput := strings.CutPrefix(m[1], "inputs.")
		switch val, given := inputs[m[1]]; {
		case given:
			env = append(env, k+"="+val)
		case isInput:
			val, ok := inputs[name]
			if !ok {
				val = a.Inputs[name].Default
			}
			env = append(env, k+"="+val)
		case m[1] == "steps.locate.outputs.dir":
			env = append(env, k+"="+filepath.Dir(agentrunBin(t)))
		default:
			t.Fatalf("env %s: the test knows no value for %q", k, v)
		}
	}
	return env
}

// runActionStep runs the script of the action's step with this id or name as GitHub
// does (bash -eo pipefail) in dir and returns its exit code, output and step outputs.
func runActionStep(t *testing.T, dir, id string, inputs map[string]string, extraEnv ...string) (int, string, map[string]string) {
	t.Helper()
	a := loadAction(t)
	i := slices.IndexFunc(a.Runs.Steps, func(s workflowStep) bool { return s.ID == id || s.Name == id })
	require.GreaterOrEqual(t, i, 0, "no step %s", id)
	step := a.Runs.Steps[i]
	script := filepath.Join(t.TempDir(), "step.sh")
	require.NoError(t, os.WriteFile(script, []byte(step.Run), 0o644))
	output := filepath.Join(t.TempDir(), "output")
	require.NoError(t, os.WriteFile(output, nil, 0o644))
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(t, "GITHUB_ACTIONS=true", "GITHUB_OUTPUT="+output,
		"GITHUB_STEP_SUMMARY="+filepath.Join(t.TempDir(), "summary")), deployStepEnv(t, a, step, inputs)...)
	cmd.Env = append(cmd.Env, extraEnv...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "bash: %v", err)
		code = ee.ExitCode()
	}
	return code, log.String(), parseOutputs(t, output)
}

// TestActionRunStep runs the action's run step with the real agentrun binary: inputs
// reach agentrun through the environment unchanged (no globbing, no command
// substitution), the step stays green so that the outputs agentrun wrote are
// published, and the next step fails with agentrun's exit code.
func TestActionRunStep(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	tests := map[string]struct {
		inputs     map[string]string
		wantCode   string
		wantStatus string
		wantShard  *runner.Shard
		wantFilter string
		wantRan    []string
	}{
		"defaults": {
			inputs:   map[string]string{"jobs": "jobs.yaml"},
			wantCode: "1", wantStatus: "failure",
			wantRan: []string{"broken", "fix-one", "fix-two", "other"},
		},
		"every input": {
			inputs: map[string]string{"jobs": "my jobs.yaml", "out": "out dir", "concurrency": "3",
				"shard": "1/2", "args": "--filter fix-*  --progress\toff"},
			wantCode: "0", wantStatus: "success",
			wantShard: &runner.Shard{Index: 1, Total: 2}, wantFilter: "fix-*", wantRan: []string{"fix-one"},
		},
		"shell syntax in args": {
			inputs:   map[string]string{"jobs": "jobs.yaml", "args": "$(touch pwned) `touch pwned` ;touch pwned"},
			wantCode: "2",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"jobs.yaml", "my jobs.yaml"} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(deploySpec), 0o644))
			}
			// A file the unquoted glob fix-* would expand to.
			require.NoError(t, os.WriteFile(filepath.Join(dir, "fix-a"), nil, 0o644))
			code, log, outputs := runActionStep(t, dir, "run", tt.inputs)
			require.Equal(t, 0, code, "the run step stays green:\n%s", log)
			assert.Equal(t, tt.wantCode, outputs["exit-code"], log)
			assert.Equal(t, tt.wantStatus, outputs["status"])
			assert.NoFileExists(t, filepath.Join(dir, "pwned"))
			if tt.wantStatus == "" {
				return
			}
			out := first(tt.inputs["out"], "agentrun-out")
			abs, err := filepath.Abs(filepath.Join(dir, out, runner.SummaryFile))
			require.NoError(t, err)
			assert.Equal(t, abs, outputs["summary-json"])
			assert.Equal(t, filepath.Join(filepath.Dir(abs), runner.ReportFile), outputs["report-html"])
			assert.FileExists(t, outputs["report-html"])
			var info runner.RunInfo
			b, err := os.ReadFile(filepath.Join(dir, out, runner.RunFile))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &info))
			assert.Equal(t, tt.wantShard, info.Shard)
			assert.Equal(t, tt.wantFilter, info.Filter)
			assert.Equal(t, tt.wantRan, info.Selected)
			assert.Equal(t, strconv.Itoa(len(tt.wantRan)-strings.Count(strings.Join(tt.wantRan, " "), "broken")), outputs["passed"])
		})
	}

	t.Run("failing step", func(t *testing.T) {
		tests := map[string]struct {
			code      int
			wantError bool
		}{"a session failed": {code: 1}, "usage error": {code: 2, wantError: true}, "interrupted": {code: 130, wantError: true}}
		for name, tt := range tests {
			t.Run(name, func(t *testing.T) {
				code, log, _ := runActionStep(t, t.TempDir(), "Fail on agentrun's exit code",
					map[string]string{"steps.run.outputs.exit-code": strconv.Itoa(tt.code)})
				assert.Equal(t, tt.code, code, log)
				assert.Equal(t, tt.wantError, strings.Contains(log, "::error title=agentrun::"), log)
			})
		}
	})
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
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
	"go.yaml.in/yaml/v3"

	"github.com/agentrun/agentrun/runner"
)

// The deployment files (action.yml, examples/github, examples/kubernetes, Dockerfile)
// are checked against the command line they drive: every `agentrun SUB --flag` they
// contain must name a subcommand and flags that `agentrun SUB --help` lists.

// repoRoot is the repository's root, seen from this package's folder.
const repoRoot = "../.."

// actionMeta is action.yml.
type actionMeta struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Inputs      map[string]struct {
		Description string `yaml:"description"`
		Required    bool   `yaml:"required"`
		Default     string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string         `yaml:"using"`
		Steps []workflowStep `yaml:"steps"`
	} `yaml:"runs"`
}

// workflowStep is a step of a workflow job or of a composite action.
type workflowStep struct {
	ID    string            `yaml:"id"`
	Name  string            `yaml:"name"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	With  map[string]string `yaml:"with"`
	Env   map[string]string `yaml:"env"`
}

// workflow is a GitHub Actions workflow file.
type workflow struct {
	Name string `yaml:"name"`
	// On is kept as a node: triggers without settings have null values.
	On          yaml.Node         `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency *struct {
		Group            string `yaml:"group"`
		CancelInProgress *bool  `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Jobs map[string]struct {
		TimeoutMinutes int `yaml:"timeout-minutes"`
		Strategy       *struct {
			FailFast *bool            `yaml:"fail-fast"`
			Matrix   map[string][]int `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []workflowStep `yaml:"steps"`
	} `yaml:"jobs"`
}

// workflowTriggers are the settings of a workflow's triggers that the tests read.
type workflowTriggers struct {
	Schedule         []struct{ Cron string } `yaml:"schedule"`
	WorkflowDispatch *dispatchTrigger        `yaml:"workflow_dispatch"`
}

// dispatchTrigger is workflow_dispatch: the inputs of a manual run.
type dispatchTrigger struct {
	Inputs map[string]struct {
		Description string `yaml:"description"`
	} `yaml:"inputs"`
}

// triggers returns the names of w's triggers and their settings.
func (w workflow) triggers(t *testing.T) (map[string]bool, workflowTriggers) {
	t.Helper()
	names := map[string]bool{}
	var tr workflowTriggers
	switch w.On.Kind {
	case yaml.ScalarNode:
		names[w.On.Value] = true
	case yaml.SequenceNode:
		for _, n := range w.On.Content {
			names[n.Value] = true
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(w.On.Content); i += 2 {
			names[w.On.Content[i].Value] = true
		}
		require.NoError(t, w.On.Decode(&tr))
		if names["workflow_dispatch"] && tr.WorkflowDispatch == nil {
			tr.WorkflowDispatch = &dispatchTrigger{}
		}
	}
	return names, tr
}

// deployInvocation is one `agentrun SUB --flag…` found in a deployment file.
type deployInvocation struct {
	where string
	sub   string
	flags []string
}

var (
	// shellInvocation finds `agentrun SUB args` in shell text, up to a shell operator.
	shellInvocation = regexp.MustCompile(`(?:^|[\s;&|(])agentrun\s+([a-z][a-z-]*)([^;&|)#\n]*)`)
	// bashArray finds array assignments such as flags=(--out "$OUT") or flags+=(…).
	bashArray = regexp.MustCompile(`\w+\+?=\(([^)]*)\)`)
	// shellComment is a comment: from a # that starts a word to the end of the line.
	shellComment = regexp.MustCompile(`(?m)(^|\s)#.*$`)
	flagToken    = regexp.MustCompile(`(?:^|[\s"'(])--([a-z][a-z0-9-]*)`)
	helpFlag     = regexp.MustCompile(`^\s+--([a-z][a-z0-9-]*)\b`)
	// pinned is an action reference pinned to a commit or at least a version tag.
	pinned       = regexp.MustCompile(`^[\w.-]+/[\w.-]+(/[\w./-]+)?@([0-9a-f]{40}|v\d+(\.\d+){0,2})$`)
	stepOutput   = regexp.MustCompile(`steps\.([\w-]+)\.outputs\.([\w-]+)`)
	inputRef     = regexp.MustCompile(`\binputs\.([\w-]+)`)
	echoedOutput = regexp.MustCompile(`echo "([\w-]+)=[^"]*" >> "\$GITHUB_OUTPUT"`)
)

func flagNames(s string) []string {
	var out []string
	for _, m := range flagToken.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// shellInvocations returns the agentrun commands of a shell script. When the script
// runs agentrun once, the flags in its array assignments belong to that command.
func shellInvocations(where, script string) []deployInvocation {
	script = shellComment.ReplaceAllString(strings.ReplaceAll(script, "\\\n", " "), "")
	var out []deployInvocation
	for _, m := range shellInvocation.FindAllStringSubmatch(script, -1) {
		out = append(out, deployInvocation{where: where, sub: m[1], flags: flagNames(m[2])})
	}
	if len(out) == 1 {
		for _, m := range bashArray.FindAllStringSubmatch(script, -1) {
			out[0].flags = append(out[0].flags, flagNames(m[1])...)
		}
	}
	return out
}

// commandFlags returns the flags `agentrun sub --help` lists, from the in-process App;
// it fails the test when sub is not a subcommand.
func commandFlags(t *testing.T, sub string) map[string]bool {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := (&App{Stdout: &stdout, Stderr: &stderr}).Main(context.Background(), []string{sub, "--help"})
	require.Equal(t, exitOK, code, "agentrun %s --help: %s", sub, stderr.String())
	flags := map[string]bool{"help": true}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if m := helpFlag.FindStringSubmatch(line); m != nil {
			flags[m[1]] = true
		}
	}
	return flags
}

// checkInvocations checks each command against the command line's help.
func checkInvocations(t *testing.T, invs []deployInvocation) {
	t.Helper()
	for _, inv := range invs {
		known := commandFlags(t, inv.sub)
		for _, f := range inv.flags {
			assert.True(t, known[f], "%s: agentrun %s has no flag --%s", inv.where, inv.sub, f)
		}
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, v), path)
}

func loadAction(t *testing.T) actionMeta {
	t.Helper()
	var a actionMeta
	readYAML(t, filepath.Join(repoRoot, "action.yml"), &a)
	return a
}

// isAgentrunAction reports whether a step uses this repository's action.
func isAgentrunAction(uses string) bool {
	return uses == "./" || strings.HasPrefix(uses, "agentrun/agentrun@")
}

// runnerOutputs are the step outputs agentrun writes itself, found by running it with
// GITHUB_ACTIONS set and reading $GITHUB_OUTPUT back.
func runnerOutputs(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	spec := filepath.Join(dir, "jobs.yaml")
	require.NoError(t, os.WriteFile(spec, []byte(deploySpec), 0o644))
	output := filepath.Join(dir, "output")
	var stdout, stderr bytes.Buffer
	app := &App{Stdout: &stdout, Stderr: &stderr, Env: []string{"HOME=" + dir, "GITHUB_ACTIONS=true",
		"GITHUB_OUTPUT=" + output, "PATH=" + os.Getenv("PATH")}}
	code := app.Main(context.Background(), []string{"run", spec, "--out", filepath.Join(dir, "out"), "--progress", "off"})
	require.Equal(t, exitFailed, code, "stderr: %s", stderr.String())
	return parseOutputs(t, output)
}

// parseOutputs reads an environment file the way the Actions runner does.
func parseOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	out := map[string]string{}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		eq, doc := strings.Index(line, "="), strings.Index(line, "<<")
		switch {
		case line == "":
		case eq >= 0 && (doc < 0 || eq < doc):
			out[line[:eq]] = line[eq+1:]
		default:
			require.Positive(t, doc, "bad line %q", line)
			name, delim, start := line[:doc], line[doc+2:], i+1
			for i++; i < len(lines) && lines[i] != delim; i++ {
			}
			require.Less(t, i, len(lines), "no closing delimiter for %s", name)
			out[name] = strings.Join(lines[start:i], "\n")
		}
	}
	return out
}

// deploySpec has four sessions on the built-in scripted model; broken fails its check.
const deploySpec = `version: 1
concurrency: 2
defaults: {tools: [Read], max_turns: 4, timeout: 1m}
jobs:
  - {id: broken, prompt: Say anything., checks: [{name: fails, run: "exit 1"}]}
  - {id: fix-one, prompt: Say one.}
  - {id: fix-two, prompt: Say two.}
  - {id: other, prompt: Say three.}
`

// TestActionMetadata checks action.yml: a composite action whose inputs and outputs are
// documented, whose expressions name inputs and step outputs that exist, that never
// expands an expression inside shell text, and whose agentrun command and outputs
// match what agentrun accepts and writes.
func TestActionMetadata(t *testing.T) {
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

	written := runnerOutputs(t)
	for _, name := range []string{"status", "passed", "failed", "total-cost-usd", "summary-json"} {
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
// or the input's default, ${{ steps.build.outputs.dir }} the binary's folder, any other
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
		case m[1] == "steps.build.outputs.dir":
			env = append(env, k+"="+filepath.Dir(agentrunBin))
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

// workflowChecks are what each example workflow must show beyond the common rules.
var workflowChecks = map[string]func(t *testing.T, w workflow){
	"pr.yml": func(t *testing.T, w workflow) {
		on, _ := w.triggers(t)
		assert.Equal(t, map[string]bool{"pull_request": true}, on, "runs on pull_request only (never pull_request_target)")
	},
	"nightly-eval.yml": func(t *testing.T, w workflow) {
		_, tr := w.triggers(t)
		assert.NotEmpty(t, tr.Schedule)
		sharded, merged := false, false
		for name, job := range w.Jobs {
			for _, s := range job.Steps {
				if isAgentrunAction(s.Uses) && s.With["shard"] != "" {
					sharded = true
					require.NotNil(t, job.Strategy, "job %s runs a shard without a matrix", name)
					require.NotNil(t, job.Strategy.FailFast, "job %s: set fail-fast", name)
					assert.False(t, *job.Strategy.FailFast, "job %s: one shard must not cancel the others", name)
					assert.Contains(t, s.With["shard"], "matrix.")
					assert.Contains(t, s.With["shard"], "strategy.job-total")
				}
				if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && job.Strategy != nil {
					assert.Contains(t, s.With["name"], "matrix.", "job %s: one artifact name per shard", name)
				}
				if strings.HasPrefix(s.Uses, "actions/download-artifact@") {
					assert.NotEmpty(t, s.With["pattern"], "job %s", name)
					assert.Equal(t, "true", s.With["merge-multiple"], "job %s", name)
				}
				for _, inv := range shellInvocations("", s.Run) {
					merged = merged || inv.sub == "merge"
				}
			}
		}
		assert.True(t, sharded, "a job runs shards")
		assert.True(t, merged, "a job runs agentrun merge")
	},
	"maintenance.yml": func(t *testing.T, w workflow) {
		_, tr := w.triggers(t)
		assert.NotEmpty(t, tr.Schedule)
		assert.NotNil(t, tr.WorkflowDispatch)
		require.NotNil(t, w.Concurrency)
		assert.NotEmpty(t, w.Concurrency.Group)
		require.NotNil(t, w.Concurrency.CancelInProgress)
		assert.False(t, *w.Concurrency.CancelInProgress, "a queued run must not cancel the running one")
	},
}

// TestExampleWorkflows checks every workflow in examples/github: minimal permissions,
// timeouts, pinned actions, secrets only in env, no expression inside shell text, the
// agentrun action given only inputs it has and agentrun only flags it has, and step
// outputs that exist.
func TestExampleWorkflows(t *testing.T) {
	action := loadAction(t)
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "github", "*.yml"))
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	require.ElementsMatch(t, []string{"pr.yml", "nightly-eval.yml", "maintenance.yml"}, names)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			var w workflow
			require.NoError(t, yaml.Unmarshal(raw, &w))
			assert.NotEmpty(t, w.Name)
			require.NotEmpty(t, w.Permissions, "declare minimal permissions")
			for scope, level := range w.Permissions {
				assert.Contains(t, []string{"read", "none"}, level, "permission %s", scope)
			}
			_, tr := w.triggers(t)
			for _, m := range inputRef.FindAllStringSubmatch(string(raw), -1) {
				require.NotNil(t, tr.WorkflowDispatch, "inputs.%s without workflow_dispatch inputs", m[1])
				assert.Contains(t, tr.WorkflowDispatch.Inputs, m[1])
			}
			var invs []deployInvocation
			for name, job := range w.Jobs {
				assert.Positive(t, job.TimeoutMinutes, "job %s needs timeout-minutes", name)
				ids := map[string]workflowStep{}
				for i, s := range job.Steps {
					where := filepath.Base(file) + " job " + name + " step " + strconv.Itoa(i)
					if s.ID != "" {
						ids[s.ID] = s
					}
					for k, v := range s.With {
						assert.NotContains(t, v, "secrets.", "%s: pass secrets through env, not with.%s", where, k)
					}
					assert.NotContains(t, s.Run, "${{", "%s: pass values through env, not into the script", where)
					invs = append(invs, shellInvocations(where, s.Run)...)
					if s.Uses != "" {
						assert.Regexp(t, pinned, s.Uses, where)
					}
					if isAgentrunAction(s.Uses) {
						for k := range s.With {
							_, ok := action.Inputs[k]
							assert.True(t, ok, "%s: the action has no input %s", where, k)
						}
						if args := s.With["args"]; args != "" {
							invs = append(invs, deployInvocation{where: where + " args", sub: "run", flags: flagNames(args)})
						}
					}
					text, err := yaml.Marshal(s)
					require.NoError(t, err)
					for _, m := range stepOutput.FindAllStringSubmatch(string(text), -1) {
						src, ok := ids[m[1]]
						require.True(t, ok, "%s: no earlier step with id %s", where, m[1])
						if isAgentrunAction(src.Uses) {
							assert.Contains(t, action.Outputs, m[2], "%s: the action has no output %s", where, m[2])
						}
					}
				}
			}
			checkInvocations(t, invs)
			if check, ok := workflowChecks[filepath.Base(file)]; ok {
				check(t, w)
			}
		})
	}
}

// k8sObject is the part of a Kubernetes manifest the tests read.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		k8sJobSpec              `yaml:",inline"`
		ConcurrencyPolicy       string `yaml:"concurrencyPolicy"`
		StartingDeadlineSeconds *int   `yaml:"startingDeadlineSeconds"`
		JobTemplate             struct {
			Spec k8sJobSpec `yaml:"spec"`
		} `yaml:"jobTemplate"`
	} `yaml:"spec"`
}

type k8sJobSpec struct {
	CompletionMode       string `yaml:"completionMode"`
	Completions          *int   `yaml:"completions"`
	Parallelism          *int   `yaml:"parallelism"`
	BackoffLimitPerIndex *int   `yaml:"backoffLimitPerIndex"`
	PodFailurePolicy     *struct {
		Rules []struct {
			Action      string `yaml:"action"`
			OnExitCodes *struct {
				ContainerName string `yaml:"containerName"`
				Operator      string `yaml:"operator"`
				Values        []int  `yaml:"values"`
			} `yaml:"onExitCodes"`
		} `yaml:"rules"`
	} `yaml:"podFailurePolicy"`
	Template struct {
		Spec struct {
			RestartPolicy  string         `yaml:"restartPolicy"`
			InitContainers []k8sContainer `yaml:"initContainers"`
			Containers     []k8sContainer `yaml:"containers"`
			Volumes        []struct {
				Name                  string     `yaml:"name"`
				PersistentVolumeClaim *yaml.Node `yaml:"persistentVolumeClaim"`
			} `yaml:"volumes"`
		} `yaml:"spec"`
	} `yaml:"template"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// invocations returns the agentrun commands a container runs: its args after the
// image's entrypoint (tini -- agentrun) when it keeps it, else agentrun commands inside
// its command and args.
func (c k8sContainer) invocations(where string) []deployInvocation {
	if len(c.Command) == 0 && strings.Contains(c.Image, "agentrun") && len(c.Args) > 0 {
		return []deployInvocation{{where: where, sub: c.Args[0], flags: flagNames(strings.Join(c.Args[1:], " "))}}
	}
	return shellInvocations(where, strings.Join(append(slices.Clone(c.Command), c.Args...), " "))
}

// flagValue returns the value after --name in args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// retriesNot reports whether the pod failure policy fails (the index or the Job)
// without retrying when container exits with code.
func (j k8sJobSpec) retriesNot(container string, code int) bool {
	if j.PodFailurePolicy == nil {
		return false
	}
	for _, r := range j.PodFailurePolicy.Rules {
		e := r.OnExitCodes
		if e != nil && (r.Action == "FailIndex" || r.Action == "FailJob") && e.Operator == "In" &&
			(e.ContainerName == "" || e.ContainerName == container) && slices.Contains(e.Values, code) {
			return true
		}
	}
	return false
}

// k8sExpansion is a $(VAR) reference that Kubernetes expands in args.
var k8sExpansion = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkJob checks the pods of a Job (or a CronJob's job template) and returns the
// agentrun container that runs `agentrun run`, if any.
func checkJob(t *testing.T, where string, j k8sJobSpec) (*k8sContainer, []deployInvocation) {
	t.Helper()
	pod := j.Template.Spec
	assert.Equal(t, "Never", pod.RestartPolicy, "%s: a pod failure policy needs restartPolicy Never", where)
	claims := map[string]bool{}
	for _, v := range pod.Volumes {
		claims[v.Name] = v.PersistentVolumeClaim != nil
	}
	var run *k8sContainer
	var invs []deployInvocation
	all := append(slices.Clone(pod.InitContainers), pod.Containers...)
	for i, c := range all {
		cinvs := c.invocations(where + " container " + c.Name)
		invs = append(invs, cinvs...)
		if len(cinvs) == 0 {
			continue
		}
		defined := map[string]bool{}
		for _, e := range c.Env {
			defined[e.Name] = true
		}
		for _, a := range c.Args {
			for _, m := range k8sExpansion.FindAllStringSubmatch(a, -1) {
				assert.True(t, defined[m[1]], "%s: $(%s) is not in the container's env", where, m[1])
			}
		}
		// Results go to a volume that outlives the pod.
		out := flagValue(c.Args, "out")
		require.NotEmpty(t, out, "%s: container %s sets no --out", where, c.Name)
		onClaim := false
		for _, m := range c.VolumeMounts {
			onClaim = onClaim || claims[m.Name] && strings.HasPrefix(out, strings.TrimSuffix(m.MountPath, "/")+"/")
		}
		assert.True(t, onClaim, "%s: --out %s is not on a persistent volume", where, out)
		if cinvs[0].sub == "run" {
			run = &all[i]
		}
	}
	return run, invs
}

// TestKubernetesExamples checks the manifests in examples/kubernetes: the Indexed Job
// runs one shard per index with the total agentrun needs, retries each index but not
// a spec error (exit code 2), and writes to a persistent volume; the CronJob never
// overlaps itself; every agentrun command names flags that exist.
func TestKubernetesExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "kubernetes", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var indexed, cron int
	var invs []deployInvocation
	for _, file := range files {
		f, err := os.Open(file)
		require.NoError(t, err)
		dec := yaml.NewDecoder(f)
		for n := 0; ; n++ {
			var obj k8sObject
			err := dec.Decode(&obj)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "%s document %d", file, n)
			where := filepath.Base(file) + " " + obj.Kind + " " + obj.Metadata.Name
			switch obj.Kind {
			case "Job":
				run, jinvs := checkJob(t, where, obj.Spec.k8sJobSpec)
				invs = append(invs, jinvs...)
				if obj.Spec.CompletionMode != "Indexed" {
					continue
				}
				indexed++
				require.NotNil(t, run, "%s runs no agentrun run", where)
				require.NotNil(t, obj.Spec.Completions, where)
				assert.NotNil(t, obj.Spec.Parallelism, "%s: set parallelism", where)
				assert.NotNil(t, obj.Spec.BackoffLimitPerIndex, "%s: retry each index on its own", where)
				assert.True(t, obj.Spec.retriesNot(run.Name, exitUsage), "%s: exit code 2 must fail the index, not retry it", where)
				total := ""
				for _, e := range run.Env {
					if e.Name == "AGENTRUN_SHARD_TOTAL" {
						total = e.Value
					}
				}
				assert.Equal(t, strconv.Itoa(*obj.Spec.Completions), total, "%s: AGENTRUN_SHARD_TOTAL must equal completions", where)
			case "CronJob":
				cron++
				run, jinvs := checkJob(t, where, obj.Spec.JobTemplate.Spec)
				invs = append(invs, jinvs...)
				require.NotNil(t, run, "%s runs no agentrun run", where)
				assert.Equal(t, "Forbid", obj.Spec.ConcurrencyPolicy, where)
				require.NotNil(t, obj.Spec.StartingDeadlineSeconds, "%s: set startingDeadlineSeconds", where)
				assert.Positive(t, *obj.Spec.StartingDeadlineSeconds, where)
				assert.True(t, obj.Spec.JobTemplate.Spec.retriesNot(run.Name, exitUsage), "%s: exit code 2 (spec error, locked output) must not be retried", where)
			}
		}
		require.NoError(t, f.Close())
	}
	assert.Equal(t, 1, indexed, "one Indexed Job")
	assert.Equal(t, 1, cron, "one CronJob")
	var subs []string
	for _, inv := range invs {
		subs = append(subs, inv.sub)
	}
	assert.Subset(t, subs, []string{"run", "merge"})
	checkInvocations(t, invs)
}

// TestShardFromEnvironment runs agentrun in-process with the shard in the environment,
// as an Indexed Job pod or a matrix leg does, and reads the shard back from run.json.
func TestShardFromEnvironment(t *testing.T) {
	tests := map[string]struct {
		env      []string
		args     []string
		want     *runner.Shard
		wantCode int
		wantErr  string
	}{
		"AGENTRUN_SHARD":        {env: []string{"AGENTRUN_SHARD=1/4"}, want: &runner.Shard{Index: 1, Total: 4}, wantCode: exitOK},
		"Indexed Job":           {env: []string{"JOB_COMPLETION_INDEX=3", "AGENTRUN_SHARD_TOTAL=4"}, want: &runner.Shard{Index: 3, Total: 4}, wantCode: exitOK},
		"flag over environment": {env: []string{"AGENTRUN_SHARD=1/4"}, args: []string{"--shard", "0/4"}, want: &runner.Shard{Index: 0, Total: 4}, wantCode: exitFailed},
		"index without total":   {env: []string{"JOB_COMPLETION_INDEX=3"}, wantCode: exitUsage, wantErr: "AGENTRUN_SHARD_TOTAL"},
		"index past total":      {env: []string{"JOB_COMPLETION_INDEX=4", "AGENTRUN_SHARD_TOTAL=4"}, wantCode: exitUsage, wantErr: "0 <= I < N"},
		"no shard":              {wantCode: exitFailed},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			spec := filepath.Join(dir, "jobs.yaml")
			require.NoError(t, os.WriteFile(spec, []byte(deploySpec), 0o644))
			out := filepath.Join(dir, "out")
			var stdout, stderr bytes.Buffer
			app := &App{Stdout: &stdout, Stderr: &stderr,
				Env: append([]string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}, tt.env...)}
			code := app.Main(context.Background(), append([]string{"run", spec, "--out", out, "--progress", "off"}, tt.args...))
			require.Equal(t, tt.wantCode, code, "stderr: %s", stderr.String())
			if tt.wantErr != "" {
				assert.Contains(t, stderr.String(), tt.wantErr)
				assert.NoDirExists(t, out)
				return
			}
			var info runner.RunInfo
			b, err := os.ReadFile(filepath.Join(out, runner.RunFile))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &info))
			assert.Equal(t, tt.want, info.Shard)
			assert.Equal(t, 4, info.SessionsTotal)
		})
	}
}

// dockerInstruction is one instruction of a Dockerfile, continuation lines joined.
type dockerInstruction struct {
	cmd, args string
}

func readDockerfile(t *testing.T) [][]dockerInstruction {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	require.NoError(t, err)
	var stages [][]dockerInstruction
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, args, _ := strings.Cut(line, " ")
		in := dockerInstruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], in)
		}
	}
	return stages
}

// TestDockerfile checks the image's recipe: a build stage that makes a static, trimmed,
// versioned binary, and a runtime stage with the agent's tools, a non-root user and
// tini as PID 1 in front of agentrun.
func TestDockerfile(t *testing.T) {
	_ = buildVersion // the -X main.buildVersion target exists
	stages := readDockerfile(t)
	require.GreaterOrEqual(t, len(stages), 2, "multi-stage")
	build, final := stages[0], stages[len(stages)-1]
	require.Regexp(t, `(?i)\sAS\s+build$`, build[0].args)
	var buildRuns []string
	for _, in := range build {
		if in.cmd == "RUN" {
			buildRuns = append(buildRuns, in.args)
		}
	}
	compile := strings.Join(buildRuns, "\n")
	for _, want := range []string{"CGO_ENABLED=0", "go build", "-trimpath", "-X main.buildVersion=", "./cmd/agentrun"} {
		assert.Contains(t, compile, want)
	}

	var user string
	var entrypoint []string
	var runs, copies []string
	for _, in := range final {
		switch in.cmd {
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			require.NoError(t, json.Unmarshal([]byte(in.args), &entrypoint), "exec form, so signals reach tini")
		case "RUN":
			runs = append(runs, in.args)
		case "COPY":
			copies = append(copies, in.args)
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	assert.NotContains(t, []string{"", "root", "0"}, uid, "the image runs as a non-root user")
	require.GreaterOrEqual(t, len(entrypoint), 3)
	assert.Equal(t, "tini", filepath.Base(entrypoint[0]), "tini is PID 1")
	assert.Contains(t, entrypoint, "--")
	assert.Equal(t, "agentrun", filepath.Base(entrypoint[len(entrypoint)-1]))
	install := regexp.MustCompile(`(apt-get install|apk add)[^&;]*`).FindString(strings.Join(runs, "\n"))
	for _, pkg := range []string{"bash", "git", "ca-certificates", "tini"} {
		assert.Regexp(t, `\s`+regexp.QuoteMeta(pkg)+`(\s|$)`, install, "the runtime image installs %s", pkg)
	}
	assert.True(t, slices.ContainsFunc(copies, func(c string) bool { return strings.Contains(c, "--from=build") }))
}

// dockerIgnored reports whether a .dockerignore pattern excludes path (slash-separated).
func dockerIgnored(patterns []string, path string) bool {
	parts := strings.Split(path, "/")
	for _, p := range patterns {
		p = strings.TrimPrefix(p, "/")
		anyDepth := strings.HasPrefix(p, "**/")
		p = strings.TrimPrefix(p, "**/")
		for start := 0; start < len(parts); start++ {
			if start > 0 && !anyDepth {
				break
			}
			for end := start + 1; end <= len(parts); end++ {
				if ok, _ := filepath.Match(p, strings.Join(parts[start:end], "/")); ok {
					return true
				}
			}
		}
	}
	return false
}

// TestDockerignore checks that the build context leaves out the repository's history
// and keeps every file the binary is built from.
func TestDockerignore(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	require.NoError(t, err)
	var patterns []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			require.False(t, strings.HasPrefix(line, "!"), "the test knows no exceptions: %s", line)
			patterns = append(patterns, line)
		}
	}
	assert.True(t, dockerIgnored(patterns, ".git/HEAD"))
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .EmbedFiles}} {{.}}{{end}}{{end}}", ".").Output()
	require.NoError(t, err)
	root, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	needed := []string{"go.mod", "go.sum"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		rel, err := filepath.Rel(root, fields[0])
		require.NoError(t, err)
		if strings.HasPrefix(rel, "..") {
			continue // a dependency outside the module
		}
		for _, f := range fields[1:] {
			needed = append(needed, filepath.ToSlash(filepath.Join(rel, f)))
		}
	}
	require.Greater(t, len(needed), 10)
	for _, f := range needed {
		assert.False(t, dockerIgnored(patterns, f), "the build needs %s", f)
	}
}

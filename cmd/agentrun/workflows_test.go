package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

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
	t.Parallel()
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

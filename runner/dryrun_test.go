package runner_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/runner"
)

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// -update rewrites the golden files under testdata. The flag is registered only when no
// other test file of the package has registered it.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata")
	}
}

func updating() bool { return flag.Lookup("update").Value.String() == "true" }

// golden compares got with testdata/<test>/<name>, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", strings.Split(t.Name(), "/")[0], name)
	if updating() {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create it")
	assert.Equal(t, string(want), got)
}

func TestDryRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec string
		opts runner.Options
		// earlier runs the spec once before the plan, so resume finds results.
		earlier bool
	}{
		{
			name: "unbounded",
			spec: `version: 1
defaults: {model: claude-sonnet-4-6, provider: anthropic}
jobs:
  - {id: lint, prompt: Lint., max_turns: 10}
  - {id: docs, prompt: "Document with {{ .matrix.model }}.", matrix: {model: [claude-haiku-4-5, gpt-5.4]}}
`,
		},
		{
			name: "session budgets",
			spec: `version: 1
concurrency: 2
defaults: {budget: {max_cost_usd: 0.5}, timeout: 5m}
jobs:
  - {id: a, prompt: A., repeat: 3}
  - {id: b, prompt: B., budget: {max_cost_usd: 1.25}}
`,
		},
		{
			name: "run budget",
			spec: `version: 1
budget: {max_cost_usd: 3}
jobs:
  - {id: a, prompt: A., repeat: 2}
`,
		},
		{
			name: "filter and concurrency flag",
			spec: `version: 1
jobs:
  - {id: a, prompt: A.}
  - {id: b, prompt: B., repeat: 2}
`,
			opts: runner.Options{Filter: "b", Concurrency: 7},
		},
		{
			// The command line resolves providers and models: a model-less session
			// gets the provider's default; my-model has no price.
			name: "resolved",
			spec: `version: 1
defaults: {budget: {max_cost_usd: 1}}
jobs:
  - {id: a, prompt: A.}
  - {id: b, prompt: B., model: my-model, repeat: 2}
  - {id: c, prompt: C., model: claude-haiku-4-5, provider: scripted}
`,
			opts: runner.Options{Resolve: func(s jobs.Session) (runner.ProviderInfo, error) {
				if s.Settings.Provider != "" {
					return runner.ProviderInfo{Name: string(s.Settings.Provider), Model: s.Settings.Model}, nil
				}
				return runner.ProviderInfo{Name: "anthropic", Model: orDefault(s.Settings.Model, "claude-sonnet-4-6")}, nil
			}},
		},
		{
			name: "run budget below every session",
			spec: `version: 1
budget: {max_cost_usd: 0.75}
defaults: {budget: {max_cost_usd: 1}}
jobs:
  - {id: a, prompt: A., repeat: 2}
  - {id: b, prompt: B., budget: {max_cost_usd: 2.5}}
`,
		},
		{
			name: "resume",
			spec: `version: 1
defaults: {tools: [Write]}
jobs:
  - {id: ok, model: success, prompt: Write.}
  - {id: failing, model: success, prompt: Fail., checks: [{name: fails, run: exit 1}]}
`,
			opts:    runner.Options{Resume: true},
			earlier: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			spec := writeSpec(t, dir, tt.spec)
			opts := tt.opts
			opts.Out = filepath.Join(dir, "out")
			if tt.earlier {
				_, err := newRunner(t, runner.Options{Out: opts.Out, Providers: newInProcess(loadScripts(t))}).Run(context.Background(), spec)
				require.NoError(t, err)
			}
			plan, err := runner.New(opts).Plan(spec)
			require.NoError(t, err)
			text := strings.ReplaceAll(runner.DryRun(spec, plan), dir, "$DIR")
			golden(t, strings.ReplaceAll(tt.name, " ", "_")+".txt", text)
			_, err = os.Stat(filepath.Join(opts.Out, runner.RunFile))
			assert.Equal(t, tt.earlier, err == nil, "a plan writes nothing")
		})
	}
}

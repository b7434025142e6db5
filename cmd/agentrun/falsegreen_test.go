package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noteSpec is one job of the note script in a folder of its own; settings go into the
// job's flow mapping, as in "model: gpt-5.4".
func noteSpec(t *testing.T, settings string) (spec, out string) {
	t.Helper()
	if settings != "" {
		settings = ", " + settings
	}
	spec = specDir(t, "version: 1\ndefaults: {script: steps.yaml, workspace: {dir: ws}}\njobs:\n  - {id: note, prompt: Write a note."+settings+"}\n")
	return spec, filepath.Join(filepath.Dir(spec), "out")
}

// TestScriptedFallback checks the fallback to the scripted model when no key is set:
// under CI a spec that names a real model stops before any session starts, naming the
// variable to set, unless the scripted model is asked for; elsewhere the run goes on and
// its summaries say, as a banner, that no real model ran.
func TestScriptedFallback(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		settings   string
		env        []string
		args       []string
		wantCode   int
		wantStderr []string
		// wantBanner is a text the summaries' banner holds; "" means no banner.
		wantBanner string
	}{
		"CI, an Anthropic model": {
			settings: "model: claude-sonnet-4-6", env: []string{"CI=true"}, wantCode: 2,
			wantStderr: []string{"session note", "claude-sonnet-4-6", "ANTHROPIC_API_KEY", "provider: scripted"},
		},
		"GitHub Actions, an OpenAI model": {
			settings: "model: gpt-5.4", env: []string{"GITHUB_ACTIONS=true"}, wantCode: 2,
			wantStderr: []string{"gpt-5.4", "OPENAI_API_KEY"},
		},
		"CI, a model of no known provider": {
			settings: "model: my-model", env: []string{"CI=1"}, wantCode: 2,
			wantStderr: []string{"my-model", "ANTHROPIC_API_KEY or OPENAI_API_KEY"},
		},
		"CI, a model from AGENTRUN_MODEL": {
			env: []string{"CI=true", "AGENTRUN_MODEL=claude-opus-4-6"}, wantCode: 2,
			wantStderr: []string{"claude-opus-4-6", "ANTHROPIC_API_KEY"},
		},
		"CI, the spec asks for the scripted model": {
			settings: "model: claude-sonnet-4-6, provider: scripted", env: []string{"CI=true"},
		},
		"CI, a flag asks for the scripted model": {
			settings: "model: claude-sonnet-4-6", env: []string{"CI=true"}, args: []string{"--provider", "scripted"},
		},
		"CI, no model named": {
			env: []string{"CI=true"}, wantBanner: "scripted model",
		},
		"CI=false is not CI": {
			settings: "model: claude-sonnet-4-6", env: []string{"CI=false"}, wantBanner: "claude-sonnet-4-6",
		},
		"outside CI, a named model": {
			settings: "model: claude-sonnet-4-6", wantBanner: "claude-sonnet-4-6",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			spec, out := noteSpec(t, tt.settings)
			args := append([]string{"run", spec, "--out", out, "--progress", "off"}, tt.args...)
			o := agentrun(t, invocation{args: args, env: baseEnv(t, tt.env...)})
			require.Equal(t, tt.wantCode, o.code, o.stderr)
			for _, want := range tt.wantStderr {
				assert.Contains(t, o.stderr, want)
			}
			if tt.wantCode != 0 {
				assert.NoDirExists(t, out, "nothing starts")
				return
			}
			var sum struct {
				Warnings []string `json:"warnings"`
			}
			readJSON(t, filepath.Join(out, "summary.json"), &sum)
			md, err := os.ReadFile(filepath.Join(out, "summary.md"))
			require.NoError(t, err)
			if tt.wantBanner == "" {
				assert.Empty(t, sum.Warnings)
				assert.NotContains(t, string(md), "⚠")
				return
			}
			require.Len(t, sum.Warnings, 1)
			assert.Contains(t, sum.Warnings[0], "scripted model")
			assert.Contains(t, sum.Warnings[0], tt.wantBanner)
			assert.Contains(t, string(md), "\n> **⚠ "+sum.Warnings[0]+"**\n", "summary.md shows it as a banner")
			head, _, _ := strings.Cut(string(md), "| Session |")
			assert.Contains(t, head, sum.Warnings[0], "the banner comes before the table")
		})
	}

	t.Run("GitHub Actions warning", func(t *testing.T) {
		spec, out := noteSpec(t, "")
		stepSummary := filepath.Join(t.TempDir(), "step-summary.md")
		o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--progress", "off"},
			env: baseEnv(t, "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+stepSummary)})
		require.Equal(t, 0, o.code, o.stderr)
		assert.Regexp(t, `(?m)^::warning title=agentrun%3A warning::No API key .*scripted model`, o.stdout)
		md, err := os.ReadFile(stepSummary)
		require.NoError(t, err)
		assert.Contains(t, string(md), "> **⚠ No API key")
	})
}

// TestWorkspaceDefault checks that sessions that do not say mode: shared never edit the
// same folder: each works in a copy of its own, and the original stays as it was.
func TestWorkspaceDefault(t *testing.T) {
	t.Parallel()
	spec, out := noteSpec(t, "repeat: 2")
	o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--progress", "off"}})
	require.Equal(t, 0, o.code, o.stderr)
	ws := filepath.Join(filepath.Dir(spec), "ws")
	assert.NoFileExists(t, filepath.Join(ws, "note.txt"), "the spec's folder is left alone")
	for _, key := range []string{"note.r1", "note.r2"} {
		assert.FileExists(t, filepath.Join(out, "workspaces", key, "note.txt"), "%s wrote in its own copy", key)
	}

	spec, out = noteSpec(t, "workspace: {mode: shared}")
	o = agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--progress", "off"}})
	require.Equal(t, 0, o.code, o.stderr)
	assert.FileExists(t, filepath.Join(filepath.Dir(spec), "ws", "note.txt"), "mode shared, written out, works in the folder itself")
	assert.NoDirExists(t, filepath.Join(out, "workspaces"))
}

// TestFilterMatchesNothing checks that a --filter that selects no session is a usage
// error, also for a dry run, rather than a green run of nothing.
func TestFilterMatchesNothing(t *testing.T) {
	t.Parallel()
	spec, out := noteSpec(t, "repeat: 2")
	for _, extra := range [][]string{nil, {"--dry-run"}} {
		args := append([]string{"run", spec, "--out", out, "--filter", "nope,not-*"}, extra...)
		o := agentrun(t, invocation{args: args})
		assert.Equal(t, 2, o.code, o.stderr)
		assert.Contains(t, o.stderr, `--filter "nope,not-*" matches no session`)
		assert.Contains(t, o.stderr, "note.r1", "the message shows keys there are")
		assert.Empty(t, o.stdout)
		assert.NoDirExists(t, out)
	}
}

// TestMatrixNameUnused checks that a matrix name that is no setting and that no
// template uses stops validate and run, with a suggestion for a typo.
func TestMatrixNameUnused(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		job        string
		wantStderr []string
	}{
		"a typo of a setting": {
			job:        "{id: a, prompt: Hi., matrix: {modle: [claude-sonnet-4-6, gpt-5.4]}}",
			wantStderr: []string{`jobs.yaml:4:42: jobs[0].matrix.modle: matrix name "modle" is no setting and no template uses it`, `did you mean "model"?`},
		},
		"a name no template uses": {
			job:        "{id: a, prompt: Hi., matrix: {seed: [1, 2, 3]}}",
			wantStderr: []string{`jobs[0].matrix.seed: matrix name "seed" is no setting and no template uses it`, "{{ .matrix.seed }}", "repeat"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			spec := specDir(t, "version: 1\ndefaults: {script: steps.yaml}\njobs:\n  - "+tt.job+"\n")
			out := filepath.Join(filepath.Dir(spec), "out")
			for _, args := range [][]string{{"validate", spec}, {"run", spec, "--out", out}} {
				o := agentrun(t, invocation{args: args})
				assert.Equal(t, 2, o.code, o.stderr)
				for _, want := range tt.wantStderr {
					assert.Contains(t, o.stderr, want)
				}
				assert.NoDirExists(t, out)
			}
		})
	}
	t.Run("used by a template", func(t *testing.T) {
		spec := specDir(t, "version: 1\njobs:\n  - {id: a, prompt: Hi., system: 'Write {{ .matrix.lang }}.', matrix: {lang: [go, rust]}}\n")
		o := agentrun(t, invocation{args: []string{"validate", spec}})
		assert.Equal(t, 0, o.code, o.stderr)
	})
}

// TestOverrideAgainstMatrix checks that --model and $AGENTRUN_MODEL (and their provider
// kin) cannot make a session whose key names its model run another one.
func TestOverrideAgainstMatrix(t *testing.T) {
	t.Parallel()
	spec := specDir(t, `version: 1
defaults: {script: steps.yaml}
jobs:
  - {id: a, prompt: 'Use {{ .matrix.model }}.', matrix: {model: [claude-sonnet-4-6, gpt-5.4]}}
  - {id: b, prompt: Hi., matrix: {provider: [scripted]}}
`)
	out := filepath.Join(filepath.Dir(spec), "out")
	tests := map[string]struct {
		args       []string
		env        []string
		wantStderr []string
	}{
		"--model": {
			args:       []string{"--model", "claude-opus-4-6"},
			wantStderr: []string{"session a+model=gpt-5.4", "--model claude-opus-4-6", "its matrix chooses model gpt-5.4", "--filter"},
		},
		"AGENTRUN_MODEL": {
			env:        []string{"AGENTRUN_MODEL=claude-opus-4-6"},
			wantStderr: []string{"session a+model=", "AGENTRUN_MODEL=claude-opus-4-6"},
		},
		"--provider": {
			args:       []string{"--provider", "anthropic"},
			wantStderr: []string{"session b+provider=scripted", "--provider anthropic", "its matrix chooses provider scripted"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			for _, extra := range [][]string{nil, {"--dry-run"}} {
				args := append(append([]string{"run", spec, "--out", out}, tt.args...), extra...)
				o := agentrun(t, invocation{args: args, env: baseEnv(t, tt.env...)})
				assert.Equal(t, 2, o.code, o.stderr)
				for _, want := range tt.wantStderr {
					assert.Contains(t, o.stderr, want)
				}
				assert.NoDirExists(t, out)
			}
		})
	}
	t.Run("the same value", func(t *testing.T) {
		spec := specDir(t, "version: 1\njobs:\n  - {id: a, prompt: '{{ .matrix.model }}', matrix: {model: [claude-sonnet-4-6]}}\n")
		o := agentrun(t, invocation{args: []string{"run", spec, "--dry-run", "--model", "claude-sonnet-4-6"}})
		assert.Equal(t, 0, o.code, o.stderr)
	})
}

// TestValidateWorkspace checks that a workspace folder that is missing, or a worktree
// workspace that is no git repository, stops validate and run with the spec's place,
// instead of every session crashing.
func TestValidateWorkspace(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		defaults, job string
		wantStderr    []string
	}{
		"missing dir of a job": {
			defaults: "{script: steps.yaml}", job: "{id: a, prompt: Hi., workspace: {dir: nowhere}}",
			wantStderr: []string{"jobs.yaml:4:43: jobs[0].workspace.dir: ", "nowhere", "no such file or directory"},
		},
		"missing dir of the defaults": {
			defaults: "{script: steps.yaml, workspace: {dir: gone}}", job: "{id: a, prompt: Hi.}",
			wantStderr: []string{"jobs.yaml:2:49: defaults.workspace.dir: ", "gone"},
		},
		"a file, not a folder": {
			defaults: "{script: steps.yaml}", job: "{id: a, prompt: Hi., workspace: {dir: steps.yaml}}",
			wantStderr: []string{"jobs[0].workspace.dir: ", "is not a directory"},
		},
		"worktree outside git": {
			defaults: "{script: steps.yaml, workspace: {dir: ws}}", job: "{id: a, prompt: Hi., workspace: {mode: worktree}}",
			wantStderr: []string{"jobs.yaml:4:44: jobs[0].workspace.mode: ", "worktree", "not a git repository"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			spec := specDir(t, "version: 1\ndefaults: "+tt.defaults+"\njobs:\n  - "+tt.job+"\n")
			out := filepath.Join(filepath.Dir(spec), "out")
			for _, args := range [][]string{{"validate", spec}, {"run", spec, "--out", out}, {"run", spec, "--out", out, "--dry-run"}} {
				o := agentrun(t, invocation{args: args})
				assert.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
				for _, want := range tt.wantStderr {
					assert.Contains(t, o.stderr, want, args)
				}
				assert.NoDirExists(t, out, "no session runs")
			}
		})
	}
	t.Run("worktree of a repository", func(t *testing.T) {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git is not installed")
		}
		spec := specDir(t, "version: 1\ndefaults: {script: steps.yaml}\njobs:\n  - {id: a, prompt: Hi., workspace: {dir: ws, mode: worktree}}\n")
		ws := filepath.Join(filepath.Dir(spec), "ws")
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "start"}} {
			out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput()
			require.NoError(t, err, "%s", out)
		}
		o := agentrun(t, invocation{args: []string{"validate", spec}})
		assert.Equal(t, 0, o.code, o.stderr)
	})
}

// TestDryRunResolved checks that a dry run shows the provider and model each session
// will use, overrides applied, and warns about budgets that cannot hold.
func TestDryRunResolved(t *testing.T) {
	t.Parallel()
	const key = "ANTHROPIC_API_KEY=sk-ant-dry-run-key-42"
	tests := map[string]struct {
		spec      string
		args, env []string
		want      []string // regular expressions, each matching a line
		dont      []string
	}{
		"no key": {
			spec: "jobs:\n  - {id: a, prompt: Hi., model: claude-sonnet-4-6}\n  - {id: b, prompt: Hi.}\n",
			want: []string{`^  a +provider=scripted model=claude-sonnet-4-6 `, `^  b +provider=scripted model=scripted `},
		},
		"a key": {
			spec: "jobs:\n  - {id: a, prompt: Hi.}\n", env: []string{key},
			want: []string{`^  a +provider=anthropic model=claude-sonnet-4-6 `},
		},
		"--model": {
			spec: "jobs:\n  - {id: a, prompt: Hi., model: claude-sonnet-4-6}\n", env: []string{key}, args: []string{"--model", "claude-haiku-4-5"},
			want: []string{`^  a +provider=anthropic model=claude-haiku-4-5 `},
		},
		"AGENTRUN_PROVIDER": {
			spec: "jobs:\n  - {id: a, prompt: Hi., model: claude-sonnet-4-6}\n", env: []string{key, "AGENTRUN_PROVIDER=scripted"},
			want: []string{`^  a +provider=scripted model=claude-sonnet-4-6 `},
		},
		"run budget below every session's": {
			spec: "budget: {max_cost_usd: 0.5}\ndefaults: {budget: {max_cost_usd: 1}}\njobs:\n  - {id: a, prompt: Hi., repeat: 2}\n  - {id: b, prompt: Hi., budget: {max_cost_usd: 2}}\n",
			want: []string{`^warning: the run budget \(\$0\.5000\) is below the budget of every session \(the smallest is \$1\.0000\): the run would start none of them$`},
		},
		"run budget above one session's": {
			spec: "budget: {max_cost_usd: 1.5}\ndefaults: {budget: {max_cost_usd: 1}}\njobs:\n  - {id: a, prompt: Hi., repeat: 2}\n  - {id: b, prompt: Hi., budget: {max_cost_usd: 2}}\n",
			dont: []string{`^warning:`},
		},
		"a model without a price": {
			spec: "defaults: {budget: {max_cost_usd: 1}}\njobs:\n  - {id: a, prompt: Hi., model: my-local-model, repeat: 2}\n  - {id: b, prompt: Hi.}\n", env: []string{key},
			want: []string{`^warning: model my-local-model \(anthropic\) has no price: the budget cannot be enforced for its 2 sessions; give it a price under prices:$`},
		},
		"a priced model": {
			spec: "prices: {my-local-model: {input: 1, output: 2}}\ndefaults: {budget: {max_cost_usd: 1}}\njobs:\n  - {id: a, prompt: Hi., model: my-local-model}\n", env: []string{key},
			dont: []string{`^warning:`},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			spec := specDir(t, "version: 1\n"+tt.spec)
			out := filepath.Join(filepath.Dir(spec), "out")
			o := agentrun(t, invocation{args: append([]string{"run", spec, "--out", out, "--dry-run"}, tt.args...), env: baseEnv(t, tt.env...)})
			require.Equal(t, 0, o.code, o.stderr)
			for _, want := range tt.want {
				assert.Regexp(t, regexp.MustCompile(`(?m)`+want), o.stdout)
			}
			for _, dont := range tt.dont {
				assert.NotRegexp(t, regexp.MustCompile(`(?m)`+dont), o.stdout)
			}
			assert.NoDirExists(t, out)
		})
	}
}

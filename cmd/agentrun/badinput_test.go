package main

import (
	"os/exec"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadInput checks inputs of issue 18 that must exit 2 with a message naming the
// problem, and run nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	summary := writeFile(t, dir, "summary.json", "{\n  \"sessions\": 1,\n  \"passed\": 1\n}\n")
	empty := writeFile(t, dir, "empty.json", "{}\n")
	tools := writeFile(t, dir, "tools.yaml", "version: 1\njobs:\n  - id: a\n    prompt: p\n    tools: [Foo, Bar]\n")
	good := writeFile(t, dir, "good.yaml", "version: 1\njobs:\n  - {id: a, prompt: hi}\n")
	tests := []struct {
		name       string
		args       []string
		env        []string
		wantStderr []string
		notStderr  []string
	}{
		{name: "bash mode out of octal", args: []string{"exec", "--bash-mode", "0999", "hi"},
			wantStderr: []string{`exec: --bash-mode: bash_mode "0999": want four octal digits`}},
		{name: "replay of summary.json", args: []string{"replay", summary},
			wantStderr: []string{"replay " + summary + ": not an events.jsonl file: events line 1"}},
		{name: "replay of a file without events", args: []string{"replay", empty},
			wantStderr: []string{"replay " + empty + ": no events"}},
		{name: "bad AGENTRUN_CONCURRENCY", args: []string{"run", "--dry-run", good}, env: []string{"AGENTRUN_CONCURRENCY=many"},
			wantStderr: []string{`environment: AGENTRUN_CONCURRENCY "many": want an integer`},
			notStderr:  []string{"strconv", "field", `"int"`}},
		{name: "bad compaction variable", args: []string{"run", "--dry-run", good}, env: []string{"AGENTRUN_DP_BETA=x"},
			wantStderr: []string{`AGENTRUN_DP_BETA "x": want a number`}},
		{name: "two unknown tools", args: []string{"validate", tools},
			wantStderr: []string{`tools[0]: unknown tool "Foo"`, `tools[1]: unknown tool "Bar"`},
			notStderr:  []string{"duplicate tool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := agentrun(t, invocation{args: tt.args, dir: dir, env: baseEnv(t, tt.env...)})
			assert.Equal(t, 2, o.code, "stderr:\n%s", o.stderr)
			assert.Empty(t, o.stdout)
			for _, want := range tt.wantStderr {
				assert.Contains(t, o.stderr, want)
			}
			for _, not := range tt.notStderr {
				assert.NotContains(t, o.stderr, not)
			}
		})
	}
}

// TestHelpShortFlags checks that exec's help writes its one-letter flags as the
// synopsis does (-m, -p), not as --m and --p.
func TestHelpShortFlags(t *testing.T) {
	t.Parallel()
	o := agentrun(t, invocation{args: []string{"exec", "--help"}})
	require.Equal(t, 0, o.code)
	assert.Regexp(t, `(?m)^  -m string +model`, o.stdout)
	assert.Regexp(t, `(?m)^  -p string +provider`, o.stdout)
	assert.NotRegexp(t, regexp.MustCompile(`(?m)^  --[a-z] `), o.stdout)
}

// TestValidateProcessSubstitution checks that `validate <(cat spec.yaml)` reads the
// spec from the pipe.
func TestValidateProcessSubstitution(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := writeFile(t, dir, "spec.yaml", "version: 1\njobs:\n  - {id: a, prompt: hi}\n")
	cmd := exec.Command("bash", "-c", `"$0" validate <(cat "$1")`, agentrunBin(t), spec)
	cmd.Env = baseEnv(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `^/dev/fd/\d+: valid, 1 jobs, 1 sessions`, string(out))
}

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// TestHelp checks that every subcommand explains itself on stdout with examples and
// exits 0.
func TestHelp(t *testing.T) {
	t.Parallel()
	commands := []string{"run", "exec", "validate", "schema", "replay", "merge", "report", "fake-server", "version"}
	for _, name := range commands {
		for _, flag := range []string{"--help", "-h"} {
			t.Run(name+flag, func(t *testing.T) {
				t.Parallel()
				o := agentrun(t, invocation{args: []string{name, flag}})
				assert.Equal(t, 0, o.code, o.stderr)
				assert.Contains(t, o.stdout, "Usage:\n  agentrun "+name)
				assert.Contains(t, o.stdout, "\nExamples:\n  agentrun "+name)
				assert.Empty(t, o.stderr)
			})
		}
	}
	t.Run("top level", func(t *testing.T) {
		t.Parallel()
		o := agentrun(t, invocation{args: []string{"--help"}})
		assert.Equal(t, 0, o.code)
		for _, name := range commands {
			assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(name)+` +\S`, o.stdout)
		}
		assert.Empty(t, o.stderr)
	})
}

// TestUsageErrors checks the mistakes that exit 2 with a message on stderr and nothing
// on stdout.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yaml", "version: 1\njobs:\n  - {id: a, prompt: hi}\n")
	tests := []struct {
		name       string
		args       []string
		wantStderr []string
	}{
		{name: "no command", args: nil, wantStderr: []string{"Usage:", "Commands:"}},
		{name: "unknown command", args: []string{"frobnicate"}, wantStderr: []string{`unknown command "frobnicate"`, "Commands:"}},
		{name: "bad flag", args: []string{"run", "--frobnicate", good}, wantStderr: []string{"flag provided but not defined: -frobnicate", "agentrun run --help"}},
		{name: "bad flag value", args: []string{"run", "--concurrency", "many", good}, wantStderr: []string{`invalid value "many" for flag -concurrency`}},
		{name: "run without a spec", args: []string{"run"}, wantStderr: []string{"want one job spec file"}},
		{name: "run with two specs", args: []string{"run", good, good}, wantStderr: []string{"got 2 arguments"}},
		{name: "missing file", args: []string{"run", filepath.Join(dir, "missing.yaml")}, wantStderr: []string{"missing.yaml", "no such file"}},
		{name: "bad output format", args: []string{"run", "--output-format", "xml", good}, wantStderr: []string{`--output-format "xml"`}},
		{name: "bad shard", args: []string{"run", "--shard", "3/2", good}, wantStderr: []string{`shard "3/2"`}},
		{name: "validate without a spec", args: []string{"validate"}, wantStderr: []string{"want at least one job spec file"}},
		{name: "replay of a missing file", args: []string{"replay", filepath.Join(dir, "none.jsonl")}, wantStderr: []string{"none.jsonl"}},
		{name: "merge without inputs", args: []string{"merge"}, wantStderr: []string{"want --out DIR"}},
		{name: "report without a folder", args: []string{"report"}, wantStderr: []string{"report: want one output folder", "got 0 arguments"}},
		{name: "report of a folder without a summary", args: []string{"report", dir}, wantStderr: []string{"no summary: " + dir + " holds no summary.json"}},
		{name: "exec fork alone", args: []string{"exec", "--fork", "hi"}, wantStderr: []string{"--fork needs --session NAME or --continue"}},
		{name: "exec script with another provider", args: []string{"exec", "--script", "x.yaml", "-p", "openai", "hi"}, wantStderr: []string{"--script needs the scripted provider"}},
		{name: "exec without a prompt", args: []string{"exec"}, wantStderr: []string{"no prompt"}},
		{name: "fake-server argument", args: []string{"fake-server", "extra"}, wantStderr: []string{`unexpected argument "extra"`}},
		{name: "schema argument", args: []string{"schema", "extra"}, wantStderr: []string{`schema: unexpected argument "extra"`}},
		{name: "version argument", args: []string{"version", "extra"}, wantStderr: []string{`version: unexpected argument "extra"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := agentrun(t, invocation{args: tt.args, dir: dir})
			assert.Equal(t, 2, o.code, "stderr:\n%s", o.stderr)
			assert.Empty(t, o.stdout)
			for _, want := range tt.wantStderr {
				assert.Contains(t, o.stderr, want)
			}
		})
	}
}

// TestInvalidSpec checks that a spec with several mistakes stops the run before
// anything starts, with every mistake's file, line, column and field on stderr.
func TestInvalidSpec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := writeFile(t, dir, "bad.yaml", `version: 1
jobs:
  - id: a
    prompt: hi
    timeout: 5 parsecs
    bogus: true
`)
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{{"run", spec, "--out", out}, {"validate", spec}} {
		t.Run(args[0], func(t *testing.T) {
			o := agentrun(t, invocation{args: args, dir: dir})
			assert.Equal(t, 2, o.code)
			assert.Empty(t, o.stdout)
			assert.Contains(t, o.stderr, spec+":5:14: jobs[0].timeout:")
			assert.Contains(t, o.stderr, `invalid duration "5 parsecs"`)
			assert.Contains(t, o.stderr, spec+`:6:5: jobs[0].bogus: unknown key "bogus"`)
			assert.NoDirExists(t, out, "nothing runs when the spec is invalid")
		})
	}
}

// TestBrokenScript checks that a scripted-model script with a mistake is a spec error
// with its position: validate and run exit 2 and nothing runs.
func TestBrokenScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "steps.yaml", "steps:\n  - text: hi\n    stop: sideways\n")
	spec := writeFile(t, dir, "jobs.yaml", "version: 1\njobs:\n  - {id: a, prompt: hi, script: steps.yaml}\n")
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{{"validate", spec}, {"run", spec, "--out", out}} {
		t.Run(args[0], func(t *testing.T) {
			o := agentrun(t, invocation{args: args, dir: dir})
			assert.Equal(t, 2, o.code)
			assert.Empty(t, o.stdout)
			assert.Contains(t, o.stderr, filepath.Join(dir, "steps.yaml")+":3:11: steps[0].stop: unknown stop reason")
			assert.NoDirExists(t, out)
		})
	}
}

// TestProviderForModel checks that a model of one provider is never sent to the other
// provider's API when only that one's key is set: exit 2 naming the missing variable.
func TestProviderForModel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := writeFile(t, dir, "jobs.yaml", "version: 1\njobs:\n  - {id: a, prompt: hi, model: gpt-5.4}\n")
	o := agentrun(t, invocation{args: []string{"run", spec, "--out", filepath.Join(dir, "out")}, dir: dir,
		env: baseEnv(t, "ANTHROPIC_API_KEY=sk-ant-test-key-42")})
	assert.Equal(t, 2, o.code)
	assert.Contains(t, o.stderr, "session a: model gpt-5.4 is an OpenAI model: set OPENAI_API_KEY")
	assert.NotContains(t, o.stderr, "sk-ant-test-key-42")
	assert.NoDirExists(t, filepath.Join(dir, "out"))
}

func TestValidate(t *testing.T) {
	t.Parallel()
	o := agentrun(t, invocation{args: []string{"validate", "../../examples/quickstart.yaml", "../../examples/batch-eval.yaml"}})
	require.Equal(t, 0, o.code, o.stderr)
	assert.Contains(t, o.stdout, "../../examples/quickstart.yaml: valid, 3 jobs, 3 sessions\n")
	assert.Contains(t, o.stdout, "  add-shout+model=gpt-5.4.r2\n")
	assert.Contains(t, o.stdout, "  expected-failure\n")

	quiet := agentrun(t, invocation{args: []string{"validate", "--quiet", "../../examples/maintenance.yaml"}})
	assert.Equal(t, 0, quiet.code)
	assert.Empty(t, quiet.stdout)
	assert.Empty(t, quiet.stderr)
}

// TestSchema checks that the schema is a JSON Schema that every example satisfies.
func TestSchema(t *testing.T) {
	t.Parallel()
	o := agentrun(t, invocation{args: []string{"schema"}})
	require.Equal(t, 0, o.code, o.stderr)
	assert.True(t, json.Valid([]byte(o.stdout)))
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(o.stdout))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("agentrun.schema.json", doc))
	schema, err := c.Compile("agentrun.schema.json")
	require.NoError(t, err)

	files, err := filepath.Glob("../../examples/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			var v any
			require.NoError(t, yaml.Unmarshal(b, &v))
			j, err := json.Marshal(v)
			require.NoError(t, err)
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(j)))
			require.NoError(t, err)
			assert.NoError(t, schema.Validate(inst))
		})
	}

}

func TestVersion(t *testing.T) {
	t.Parallel()
	o := agentrun(t, invocation{args: []string{"version"}})
	assert.Equal(t, 0, o.code)
	assert.Regexp(t, `^agentrun \S+ \(go\S+ \w+/\w+\)\n$`, o.stdout)
	assert.Empty(t, o.stderr)
}

func TestVersionOf(t *testing.T) {
	t.Parallel()
	rev := "3f2a9c1d0e4b5a6978877665544332211000ffee"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := map[string]struct {
		linked string
		info   *debug.BuildInfo
		want   string
	}{
		"linked wins":    {linked: "v1.4.0", info: &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, want: "v1.4.0"},
		"module version": {info: &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}, Settings: vcs("false")}, want: "v1.3.0"},
		"revision":       {info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("false")}, want: "dev+3f2a9c1d0e4b"},
		"dirty revision": {info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")}, want: "dev+3f2a9c1d0e4b-dirty"},
		"nothing known":  {info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, want: "dev"},
		"no build info":  {want: "dev"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.want, versionOf(tt.linked, tt.info))
		})
	}
}

// TestVersionOfBinary checks that the binary built from a git checkout names its
// revision, not a bare dev.
func TestVersionOfBinary(t *testing.T) {
	t.Parallel()
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	require.NoError(t, err)
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err == nil && !fi.IsDir() {
		// The go command looks for a .git folder: it stamps no revision in a worktree.
		t.Skip("a git worktree, whose .git is a file: the go command stamps no revision here")
	}
	o := agentrun(t, invocation{args: []string{"version"}})
	require.Equal(t, 0, o.code)
	assert.NotContains(t, o.stdout, "agentrun dev ")
	assert.Contains(t, o.stdout, string(rev[:12]))
}

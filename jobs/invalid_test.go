package jobs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doc joins lines into a YAML document, so that line numbers can be read off a case.
func doc(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// writeFiles creates files (path → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// specProblems parses give as dir/spec.yaml and returns its problems.
func specProblems(t *testing.T, give string, files map[string]string, env map[string]string) (string, []Problem) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	path := filepath.Join(dir, "spec.yaml")
	s, err := Parse(path, []byte(give), mapEnv(env))
	require.Error(t, err, "spec should be invalid")
	assert.Nil(t, s)
	var se *SpecError
	require.True(t, errors.As(err, &se), "error is %T, want *SpecError", err)
	return path, se.Errors
}

func mapEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// invalidCase is a spec with exactly one problem, and where and what it is.
type invalidCase struct {
	name      string
	give      string
	files     map[string]string
	env       map[string]string
	wantLine  int
	wantCol   int
	wantField string
	wantMsg   string
}

// testInvalid parses each case's spec and checks its one problem.
func testInvalid(t *testing.T, tests []invalidCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, got := specProblems(t, tt.give, tt.files, tt.env)
			require.Len(t, got, 1, "problems: %v", got)
			p := got[0]
			assert.Equal(t, path, p.File)
			assert.Equal(t, tt.wantLine, p.Line, "line of %v", p)
			assert.Equal(t, tt.wantCol, p.Column, "column of %v", p)
			assert.Equal(t, tt.wantField, p.Field)
			assert.Contains(t, p.Message, tt.wantMsg)
			assert.NotContains(t, p.String(), "s3cr3t", "a value from the environment leaked")
		})
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []invalidCase{
		{
			name:     "unknown top-level key",
			give:     doc("version: 1", "colour: red", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 2, wantCol: 1, wantField: "colour", wantMsg: `unknown key "colour"`,
		},
		{
			name:     "setting at top level",
			give:     doc("version: 1", "model: x", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 2, wantCol: 1, wantField: "model", wantMsg: "settings go under defaults or in a job",
		},
		{
			name:     "unknown key in defaults with suggestion",
			give:     doc("version: 1", "defaults:", "  tiemout: 5m", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 3, wantField: "defaults.tiemout", wantMsg: `unknown key "tiemout"; did you mean "timeout"?`,
		},
		{
			name:     "job key in defaults",
			give:     doc("version: 1", "defaults:", "  prompt: hi", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 3, wantField: "defaults.prompt", wantMsg: "allowed only in a job",
		},
		{
			name:     "unknown key in a job",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    modle: x"),
			wantLine: 5, wantCol: 5, wantField: "jobs[0].modle", wantMsg: `did you mean "model"?`,
		},
		{
			name:     "unknown key in workspace",
			give:     doc("version: 1", "defaults:", "  workspace: {dir: ., mod: copy}", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 23, wantField: "defaults.workspace.mod", wantMsg: `did you mean "mode"?`,
		},
		{
			name:     "scratch space past half the job's memory limit",
			give:     doc("version: 1", "defaults:", "  sandbox: {memory_mib: 1024}", "jobs:", "  - id: a", "    prompt: hi", "    sandbox: {scratch_mib: 4096}"),
			wantLine: 7, wantCol: 28, wantField: "jobs[0].sandbox.scratch_mib", wantMsg: "4096 MiB is more than half of sandbox.memory_mib (1024)",
		},
		{
			name:     "scratch space past half the memory limit, both in defaults",
			give:     doc("version: 1", "defaults:", "  sandbox: {scratch_mib: 600, memory_mib: 1000}", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 26, wantField: "defaults.sandbox.scratch_mib", wantMsg: "give at most 500",
		},
		{
			name:     "unknown key in a check",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    checks:", "      - {name: vet, run: go vet, cmd: x}"),
			wantLine: 6, wantCol: 34, wantField: "jobs[0].checks[0].cmd", wantMsg: `unknown key "cmd"`,
		},
		{
			name:     "string for an integer",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", `    max_turns: "50"`),
			wantLine: 5, wantCol: 16, wantField: "jobs[0].max_turns", wantMsg: `want an integer, got the string "50"`,
		},
		{
			name:     "scalar for a list",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    tools: Read"),
			wantLine: 5, wantCol: 12, wantField: "jobs[0].tools", wantMsg: `want a list, got the string "Read"`,
		},
		{
			name:     "list for a mapping",
			give:     doc("version: 1", "defaults:", "  env: [A]", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 8, wantField: "defaults.env", wantMsg: "want a mapping, got a list",
		},
		{
			name:     "number for a string",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    model: 4"),
			wantLine: 5, wantCol: 12, wantField: "jobs[0].model", wantMsg: "want a string, got the integer 4",
		},
		{
			name:     "duration without unit",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    timeout: 30"),
			wantLine: 5, wantCol: 14, wantField: "jobs[0].timeout", wantMsg: `30 has no unit: add one, such as "30s" or "30m"`,
		},
		{
			name:     "quoted duration without unit",
			give:     doc("version: 1", "defaults:", `  idle_timeout: "30"`, "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 17, wantField: "defaults.idle_timeout", wantMsg: `"30" has no unit`,
		},
		{
			name:     "negative duration",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    timeout: -5m"),
			wantLine: 5, wantCol: 14, wantField: "jobs[0].timeout", wantMsg: `duration must be positive, got "-5m"`,
		},
		{
			name:     "duration in words",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    tool_timeout: 5 minutes"),
			wantLine: 5, wantCol: 19, wantField: "jobs[0].tool_timeout", wantMsg: `invalid duration "5 minutes"`,
		},
		{
			name:     "bad provider",
			give:     doc("version: 1", "defaults:", "  provider: antropic", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 13, wantField: "defaults.provider", wantMsg: `unknown provider "antropic" (did you mean "anthropic"?); want one of anthropic, openai, responses, scripted`,
		},
		{
			name:     "unknown tool",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    tools: [Read, Bsh]"),
			wantLine: 5, wantCol: 19, wantField: "jobs[0].tools[1]", wantMsg: `unknown tool "Bsh" (did you mean "Bash"?)`,
		},
		{
			name:     "repeated tool",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    tools: [Read, Read]"),
			wantLine: 5, wantCol: 19, wantField: "jobs[0].tools[1]", wantMsg: `duplicate tool "Read" (first at 5:13)`,
		},
		{
			name:     "bash_mode of three digits",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", `    bash_mode: "999"`),
			wantLine: 5, wantCol: 16, wantField: "jobs[0].bash_mode", wantMsg: `invalid value "999": want four octal digits such as "0467"`,
		},
		{
			name:     "bash_mode of letters",
			give:     doc("version: 1", "defaults:", "  bash_mode: abc", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 14, wantField: "defaults.bash_mode", wantMsg: `invalid value "abc"`,
		},
		{
			name:     "bash_mode with digit 8",
			give:     doc("version: 1", "defaults:", "  bash_mode: '0487'", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 14, wantField: "defaults.bash_mode", wantMsg: `invalid value "0487"`,
		},
		{
			name:     "unquoted bash_mode",
			give:     doc("version: 1", "defaults:", "  bash_mode: 0777", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 14, wantField: "defaults.bash_mode", wantMsg: `want a quoted string of four octal digits such as "0467", got the integer 0777`,
		},
		{
			name:     "duplicate job id",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "  - id: a", "    prompt: ho"),
			wantLine: 5, wantCol: 9, wantField: "jobs[1].id", wantMsg: `duplicate job id "a" (first at 3:9, jobs[0])`,
		},
		{
			name:     "missing id",
			give:     doc("version: 1", "jobs:", "  - prompt: hi"),
			wantLine: 3, wantCol: 5, wantField: "jobs[0].id", wantMsg: `missing required key "id"`,
		},
		{
			name:     "id with a space",
			give:     doc("version: 1", "jobs:", `  - id: "a b"`, "    prompt: hi"),
			wantLine: 3, wantCol: 9, wantField: "jobs[0].id", wantMsg: `invalid value "a b": want letters, digits`,
		},
		{
			name:     "id starting with a dot",
			give:     doc("version: 1", "jobs:", "  - id: .hidden", "    prompt: hi"),
			wantLine: 3, wantCol: 9, wantField: "jobs[0].id", wantMsg: `invalid value ".hidden"`,
		},
		{
			name:     "no prompt",
			give:     doc("version: 1", "jobs:", "  - id: a", "    model: m"),
			wantLine: 3, wantCol: 5, wantField: "jobs[0]", wantMsg: "missing prompt: set prompt or prompt_file",
		},
		{
			name:     "empty prompt",
			give:     doc("version: 1", "jobs:", "  - id: a", `    prompt: ""`),
			wantLine: 4, wantCol: 13, wantField: "jobs[0].prompt", wantMsg: "must not be empty",
		},
		{
			name:     "prompt and prompt_file",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    prompt_file: p.md"),
			files:    map[string]string{"p.md": "hello"},
			wantLine: 5, wantCol: 18, wantField: "jobs[0].prompt_file", wantMsg: "set either prompt (at 4:13) or prompt_file, not both",
		},
		{
			name:     "missing prompt_file",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt_file: prompts/nope.md"),
			wantLine: 4, wantCol: 18, wantField: "jobs[0].prompt_file", wantMsg: "no such file or directory",
		},
		{
			name:     "prompt_file is a directory",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt_file: prompts"),
			files:    map[string]string{"prompts/x.md": "x"},
			wantLine: 4, wantCol: 18, wantField: "jobs[0].prompt_file", wantMsg: "is not a regular file",
		},
		{
			name:     "empty prompt_file",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt_file: p.md"),
			files:    map[string]string{"p.md": "\n  \n"},
			wantLine: 4, wantCol: 18, wantField: "jobs[0].prompt_file", wantMsg: "prompt file p.md is empty",
		},
		{
			name:     "bad template in prompt_file",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt_file: p.md"),
			files:    map[string]string{"p.md": "line one\nline {{ .job \n"},
			wantLine: 4, wantCol: 18, wantField: "jobs[0].prompt_file", wantMsg: "invalid template: p.md:3: unclosed action started at p.md:2",
		},
		{
			name:     "repeat 0",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    repeat: 0"),
			wantLine: 5, wantCol: 13, wantField: "jobs[0].repeat", wantMsg: "must be at least 1, got 0",
		},
		{
			name:     "concurrency 0",
			give:     doc("version: 1", "concurrency: 0", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 2, wantCol: 14, wantField: "concurrency", wantMsg: "must be at least 1, got 0",
		},
		{
			name:     "max_turns -1",
			give:     doc("version: 1", "defaults:", "  max_turns: -1", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 14, wantField: "defaults.max_turns", wantMsg: "must be at least 1, got -1",
		},
		{
			name:     "retries -1",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    retries: -1"),
			wantLine: 5, wantCol: 14, wantField: "jobs[0].retries", wantMsg: "must not be negative, got -1",
		},
		{
			name:     "telemetry flag not a boolean",
			give:     doc("version: 1", "telemetry: {propagate_to_provider: sometimes}", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 2, wantCol: 36, wantField: "telemetry.propagate_to_provider", wantMsg: `want true or false, got the string "sometimes"`,
		},
		{
			name:     "telemetry flag from a variable that is not a boolean",
			give:     doc("version: 1", "telemetry: {propagate_to_provider: \"${PROPAGATE}\"}", "jobs:", "  - id: a", "    prompt: hi"),
			env:      map[string]string{"PROPAGATE": "maybe"},
			wantLine: 2, wantCol: 36, wantField: "telemetry.propagate_to_provider", wantMsg: `"${PROPAGATE}" does not expand to true or false`,
		},
		{
			name:     "zero cost budget",
			give:     doc("version: 1", "budget: {max_cost_usd: 0}", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 2, wantCol: 24, wantField: "budget.max_cost_usd", wantMsg: "must be greater than 0, got 0",
		},
		{
			name:     "infinite cost budget",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    budget: {max_cost_usd: .inf}"),
			wantLine: 5, wantCol: 28, wantField: "jobs[0].budget.max_cost_usd", wantMsg: "must be a finite number",
		},
		{
			name:     "bad output_schema",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    output_schema: {type: foo}"),
			wantLine: 5, wantCol: 20, wantField: "jobs[0].output_schema", wantMsg: "invalid output_schema:",
		},
		{
			name:     "output_schema with an external reference",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    output_schema: {$ref: 'file:///etc/passwd'}"),
			wantLine: 5, wantCol: 20, wantField: "jobs[0].output_schema", wantMsg: "external references are not allowed",
		},
		{
			name:     "output_schema not a mapping",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    output_schema: object"),
			wantLine: 5, wantCol: 20, wantField: "jobs[0].output_schema", wantMsg: "want a mapping (a JSON Schema object)",
		},
		{
			name:     "output_schema with an infinite number",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    output_schema: {type: number, maximum: .inf}"),
			wantLine: 5, wantCol: 44, wantField: "jobs[0].output_schema.maximum", wantMsg: ".inf is not a finite number, which JSON cannot hold",
		},
		{
			name:     "output_schema with a local tag",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    output_schema: {type: !t string}"),
			wantLine: 5, wantCol: 27, wantField: "jobs[0].output_schema.type", wantMsg: "want a JSON value, got a value tagged !t",
		},
		{
			name:     "output_schema with an undefined variable",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    output_schema: {type: object, description: '${NOPE}'}"),
			wantLine: 5, wantCol: 48, wantField: "jobs[0].output_schema.description", wantMsg: "undefined variable ${NOPE}",
		},
		{
			name:     "matrix value is a map",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    matrix:", "      model: [a, {b: c}]"),
			wantLine: 6, wantCol: 18, wantField: "jobs[0].matrix.model[1]", wantMsg: "want a string, number or boolean, got a mapping",
		},
		{
			name:     "matrix list is empty",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    matrix: {model: []}"),
			wantLine: 5, wantCol: 21, wantField: "jobs[0].matrix.model", wantMsg: "must not be empty",
		},
		{
			name:     "matrix value does not fit the setting",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    matrix: {max_turns: [5, x]}"),
			wantLine: 5, wantCol: 29, wantField: "jobs[0].matrix.max_turns[1]", wantMsg: `"x" is not an integer`,
		},
		{
			name:     "matrix overrides a list setting",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    matrix: {tools: [Read]}"),
			wantLine: 5, wantCol: 21, wantField: "jobs[0].matrix.tools", wantMsg: "takes a list",
		},
		{
			name:     "matrix name is a job key",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    matrix: {prompt: [x]}"),
			wantLine: 5, wantCol: 22, wantField: "jobs[0].matrix.prompt", wantMsg: "is a job key",
		},
		{
			name:     "matrix name with a dash",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    matrix: {go-version: [x]}"),
			wantLine: 5, wantCol: 14, wantField: "jobs[0].matrix.go-version", wantMsg: `matrix name "go-version"`,
		},
		{
			name:     "duplicate matrix value",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    matrix: {model: [m, n, m]}"),
			wantLine: 5, wantCol: 28, wantField: "jobs[0].matrix.model[2]", wantMsg: `duplicate matrix value "m" (first at 5:22)`,
		},
		{
			name:     "matrix name that is a typo of a setting",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    matrix: {modle: [m, n]}"),
			wantLine: 5, wantCol: 21, wantField: "jobs[0].matrix.modle", wantMsg: `matrix name "modle" is no setting and no template uses it; did you mean "model"?`,
		},
		{
			name:     "matrix name that is a typo of a nested setting",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    matrix: {max_turn: [3]}"),
			wantLine: 5, wantCol: 24, wantField: "jobs[0].matrix.max_turn", wantMsg: `did you mean "max_turns"?`,
		},
		{
			name:     "matrix name that is a typo of a name the prompt reads",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: 'hi {{ .matrix.language }}'", "    matrix: {language: [go], langauge: [x]}"),
			wantLine: 5, wantCol: 40, wantField: "jobs[0].matrix.langauge", wantMsg: `did you mean "language"?`,
		},
		{
			name:     "matrix name no template reads",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi {{ .job }}", "    matrix: {seed: [1, 2]}"),
			wantLine: 5, wantCol: 20, wantField: "jobs[0].matrix.seed",
			wantMsg: `matrix name "seed" is no setting and no template uses it: read it in the prompt or system as {{ .matrix.seed }}, or use repeat for independent sessions`,
		},
		{
			name:     "undefined variable",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi ${NOPE}"),
			wantLine: 4, wantCol: 13, wantField: "jobs[0].prompt", wantMsg: "undefined variable ${NOPE} (give a default with ${NOPE:-value})",
		},
		{
			name:     "unterminated variable",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: cost ${HOME"),
			wantLine: 4, wantCol: 13, wantField: "jobs[0].prompt", wantMsg: "unterminated ${",
		},
		{
			name:     "variable that is not an integer",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    max_turns: ${TURNS:-many}"),
			wantLine: 5, wantCol: 16, wantField: "jobs[0].max_turns", wantMsg: `"${TURNS:-many}" does not expand to an integer`,
		},
		{
			name:     "variable that is not a duration hides its value",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    timeout: ${T}"),
			env:      map[string]string{"T": "s3cr3t"},
			wantLine: 5, wantCol: 14, wantField: "jobs[0].timeout", wantMsg: `invalid duration value: use Go duration syntax such as "90s", "30m" or "1h30m" (from "${T}")`,
		},
		{
			name:     "bad template",
			give:     doc("version: 1", "jobs:", "  - id: a", `    prompt: "{{ .matrix.model"`),
			wantLine: 4, wantCol: 13, wantField: "jobs[0].prompt", wantMsg: "invalid template: prompt:1:",
		},
		{
			name:     "template with define",
			give:     doc("version: 1", "jobs:", "  - id: a", `    system: '{{ define "x" }}y{{ end }}'`, "    prompt: hi"),
			wantLine: 4, wantCol: 13, wantField: "jobs[0].system", wantMsg: "{{define}} and {{block}} are not supported",
		},
		{
			name:     "template uses a missing matrix key",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi {{ .matrix.model }}"),
			wantLine: 4, wantCol: 13, wantField: "jobs[0].prompt", wantMsg: `map has no entry for key "model"`,
		},
		{
			name:     "version 2",
			give:     doc("version: 2", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 1, wantCol: 10, wantField: "version", wantMsg: "unsupported version 2: this agentrun reads version 1",
		},
		{
			name:     "missing version",
			give:     doc("jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 1, wantCol: 1, wantField: "version", wantMsg: `missing required key "version"`,
		},
		{
			name:     "empty jobs",
			give:     doc("version: 1", "jobs: []"),
			wantLine: 2, wantCol: 7, wantField: "jobs", wantMsg: "must not be empty",
		},
		{
			name:     "empty file",
			give:     "# nothing here\n",
			wantLine: 1, wantCol: 1, wantField: "", wantMsg: "empty job spec",
		},
		{
			name:     "not a mapping",
			give:     doc("- a", "- b"),
			wantLine: 1, wantCol: 1, wantField: "", wantMsg: "want a mapping, got a list",
		},
		{
			name:     "duplicate session keys across jobs",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    repeat: 2", "  - id: a.r2", "    prompt: ho"),
			wantLine: 6, wantCol: 9, wantField: "jobs[1]", wantMsg: `session key "a.r2" is produced twice (also by job "a", jobs[0] at 3:9)`,
		},
		{
			name:     "session keys that differ only in case",
			give:     doc("version: 1", "jobs:", "  - id: Fix", "    prompt: hi", "  - id: fix", "    prompt: ho"),
			wantLine: 5, wantCol: 9, wantField: "jobs[1]", wantMsg: `session keys "fix" and "Fix" (job "Fix", jobs[0] at 3:9) differ only in case`,
		},
		{
			name:     "syntax error",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: [hi"),
			wantLine: 4, wantCol: 5, wantField: "", wantMsg: "yaml: did not find expected ',' or ']'",
		},
		{
			name:     "syntax error in an unclosed list",
			give:     doc("version: [1", "jobs: []"),
			wantLine: 2, wantCol: 1, wantField: "", wantMsg: "yaml: did not find expected ',' or ']'",
		},
		{
			name:     "scanner error",
			give:     doc("version: 1", "jobs:", "\t- id: a"),
			wantLine: 3, wantCol: 1, wantField: "", wantMsg: "yaml: found character that cannot start any token: a tab",
		},
		{
			name:     "unknown anchor",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: *nope"),
			wantLine: 4, wantCol: 13, wantField: "", wantMsg: "yaml: unknown anchor 'nope' referenced",
		},
		{
			name:     "duplicate key",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    prompt: ho"),
			wantLine: 5, wantCol: 5, wantField: "jobs[0].prompt", wantMsg: `duplicate key "prompt" (first at 4:5)`,
		},
		{
			name:     "key without value",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    model:"),
			wantLine: 5, wantCol: 11, wantField: "jobs[0].model", wantMsg: "no value: remove the key or give it a value",
		},
		{
			name:     "second document",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "---", "version: 1"),
			wantLine: 5, wantCol: 1, wantField: "", wantMsg: "a job spec holds one YAML document",
		},
		{
			name:     "check without run",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    checks:", "      - name: vet"),
			wantLine: 6, wantCol: 9, wantField: "jobs[0].checks[0].run", wantMsg: `missing required key "run"`,
		},
		{
			name:     "duplicate check name",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    checks:", "      - {name: t, run: x}", "      - {name: t, run: y}"),
			wantLine: 7, wantCol: 16, wantField: "jobs[0].checks[1].name", wantMsg: `duplicate check name "t" (first at 6:16)`,
		},
		{
			name:     "secret that is not a variable name",
			give:     doc("version: 1", "defaults:", "  secrets: [my-token]", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 13, wantField: "defaults.secrets[0]", wantMsg: `invalid value "my-token": want an environment variable name`,
		},
		{
			name:     "skill that is a path",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    skills: [ok, ../up]"),
			wantLine: 5, wantCol: 18, wantField: "jobs[0].skills[1]", wantMsg: `invalid value "../up": want letters, digits`,
		},
		{
			name:     "env key that is not a variable name",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    env: {A-B: x}"),
			wantLine: 5, wantCol: 11, wantField: "jobs[0].env.A-B", wantMsg: `"A-B" is not an environment variable name`,
		},
		{
			name:     "price without output",
			give:     doc("version: 1", "prices:", "  my-model: {input: 1}", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 13, wantField: "prices.my-model.output", wantMsg: `missing required key "output"`,
		},
		{
			name:     "missing script",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    provider: scripted", "    script: nope.txt"),
			wantLine: 6, wantCol: 13, wantField: "jobs[0].script", wantMsg: "nope.txt: no such file or directory",
		},
		{
			name:     "bad effort",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    thinking: {effort: extreme}"),
			wantLine: 5, wantCol: 24, wantField: "jobs[0].thinking.effort", wantMsg: `unknown effort "extreme"`,
		},
		{
			name:     "cache prime not a boolean",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    cache: {prime: yes}"),
			wantLine: 5, wantCol: 20, wantField: "jobs[0].cache.prime", wantMsg: `want true or false, got the string "yes"`,
		},
		{
			name:     "cache prime matrix value not a boolean",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    matrix: {cache.prime: [maybe]}"),
			wantLine: 5, wantCol: 28, wantField: "jobs[0].matrix.cache.prime[0]", wantMsg: `"maybe" is not true or false`,
		},
		{
			name:     "bad workspace mode",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    workspace: {mode: clone}"),
			wantLine: 5, wantCol: 23, wantField: "jobs[0].workspace.mode", wantMsg: `unknown workspace mode "clone"; want one of shared, copy, worktree`,
		},
		{
			name:     "alias that contains itself",
			give:     doc("version: 1", "x-loop: &loop [*loop]", "jobs:", "  - id: a", "    prompt: hi", "    tools: *loop"),
			wantLine: 2, wantCol: 16, wantField: "jobs[0].tools[0]", wantMsg: "alias *loop refers to a value that contains it",
		},
		{
			name:     "too many sessions",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    repeat: 20001"),
			wantLine: 3, wantCol: 5, wantField: "jobs[0]", wantMsg: "expands to too many sessions: a spec may have at most 20000",
		},
		{
			name:     "merge of a scalar",
			give:     doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    <<: x"),
			wantLine: 5, wantCol: 9, wantField: "jobs[0]", wantMsg: "want a mapping or a list of mappings to merge (<<)",
		},
	}
	testInvalid(t, tests)
}

func TestParseReportsEveryProblem(t *testing.T) {
	give := doc(
		"version: 1",                   // 1
		"concurrency: 0",               // 2
		"defaults:",                    // 3
		"  timeout: 30",                // 4
		"  provider: antropic",         // 5
		"jobs:",                        // 6
		"  - id: a",                    // 7
		"    prompt: hi",               // 8
		"    tools: [Bsh]",             // 9
		"  - id: a",                    // 10
		"    prompt: '{{ .oops'",       // 11
		"    bash_mode: '999'",         // 12
		"  - prompt: there",            // 13
		"    output_schema: {type: 1}", // 14
	)
	path, got := specProblems(t, give, nil, nil)
	want := []string{
		path + ":2:14: concurrency: must be at least 1, got 0",
		path + `:4:12: defaults.timeout: 30 has no unit: add one, such as "30s" or "30m"`,
		path + `:5:13: defaults.provider: unknown provider "antropic" (did you mean "anthropic"?); want one of anthropic, openai, responses, scripted`,
		path + `:9:13: jobs[0].tools[0]: unknown tool "Bsh" (did you mean "Bash"?); want one of Read, Write, Edit, Bash, Glob, Grep, TodoWrite, Task`,
		path + `:10:9: jobs[1].id: duplicate job id "a" (first at 7:9, jobs[0])`,
		path + `:11:13: jobs[1].prompt: invalid template: prompt:1: unclosed action`,
		path + `:12:16: jobs[1].bash_mode: invalid value "999": want four octal digits such as "0467"`,
		path + `:13:5: jobs[2].id: missing required key "id"`,
	}
	var lines []string
	for _, p := range got {
		lines = append(lines, p.String())
	}
	require.Len(t, lines, len(want)+1, "problems:\n%s", strings.Join(lines, "\n"))
	assert.Equal(t, want, lines[:len(want)])
	assert.Contains(t, lines[len(want)], path+":14:20: jobs[2].output_schema: invalid output_schema:")

	_, err := Parse(path, []byte(give), nil)
	assert.Equal(t, strings.Join(lines, "\n"), err.Error(), "Error lists one problem per line")
}

func TestProblemString(t *testing.T) {
	tests := map[string]struct {
		give Problem
		want string
	}{
		"full":        {give: Problem{File: "a.yaml", Line: 3, Column: 7, Field: "jobs[0].id", Message: "bad"}, want: "a.yaml:3:7: jobs[0].id: bad"},
		"no column":   {give: Problem{File: "a.yaml", Line: 3, Message: "yaml: bad"}, want: "a.yaml:3: yaml: bad"},
		"no position": {give: Problem{File: "a.yaml", Field: "jobs[1]", Message: "bad"}, want: "a.yaml: jobs[1]: bad"},
		"nothing":     {give: Problem{Message: "bad"}, want: "bad"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give.String())
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(filepath.Join(dir, "missing.yaml"), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)

	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, []byte("version: 1\n"+strings.Repeat("#", MaxSpecBytes)), 0o644))
	_, err = Load(big, nil)
	assert.ErrorIs(t, err, ErrTooLarge)
}

func TestParseCapsTheProblemList(t *testing.T) {
	lines := []string{"version: 1", "jobs:", "  - id: a", "    prompt: hi"}
	for i := range MaxProblems + 50 {
		lines = append(lines, fmt.Sprintf("    unknown%d: x", i))
	}
	_, got := specProblems(t, doc(lines...), nil, nil)
	require.Len(t, got, MaxProblems+1)
	assert.Equal(t, "jobs[0].unknown0", got[0].Field)
	assert.Equal(t, "and 50 more problems", got[MaxProblems].Message)
}

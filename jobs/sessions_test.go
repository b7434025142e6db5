package jobs

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

// parseOK parses give as dir/spec.yaml, requiring success.
func parseOK(t *testing.T, dir, give string, env map[string]string) *Spec {
	t.Helper()
	s, err := Parse(filepath.Join(dir, "spec.yaml"), []byte(give), mapEnv(env))
	require.NoError(t, err)
	return s
}

func sessionsOK(t *testing.T, s *Spec) []Session {
	t.Helper()
	sessions, err := s.Sessions()
	require.NoError(t, err)
	return sessions
}

func TestSessionsGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/valid/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			s, err := Load(file, nil)
			require.NoError(t, err)
			got, err := json.MarshalIndent(sessionsOK(t, s), "", "  ")
			require.NoError(t, err)
			// Absolute paths depend on the checkout; the golden file has $SPEC_DIR.
			got = []byte(strings.ReplaceAll(string(got), s.Dir(), "$SPEC_DIR"))
			golden := filepath.Join("testdata", "TestSessionsGolden", name+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, append(got, '\n'), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -update to create it")
			assert.JSONEq(t, string(want), string(got))
		})
	}
}

func TestSessionKeys(t *testing.T) {
	tests := map[string]struct {
		give []string // job lines after id and prompt
		want []string
	}{
		"plain":  {want: []string{"a"}},
		"repeat": {give: []string{"repeat: 3"}, want: []string{"a.r1", "a.r2", "a.r3"}},
		"repeat in natural order": {
			give: []string{"repeat: 10"},
			want: []string{"a.r1", "a.r2", "a.r3", "a.r4", "a.r5", "a.r6", "a.r7", "a.r8", "a.r9", "a.r10"},
		},
		"matrix names sorted, values in order": {
			give: []string{"matrix: {os: [linux, mac], model: [y, x]}"},
			want: []string{"a+model=x+os=linux", "a+model=x+os=mac", "a+model=y+os=linux", "a+model=y+os=mac"},
		},
		"matrix times repeat": {
			give: []string{"matrix: {model: [gpt-5.4]}", "repeat: 2"},
			want: []string{"a+model=gpt-5.4.r1", "a+model=gpt-5.4.r2"},
		},
		"numbers keep their text": {
			give: []string{"matrix: {go: [1.22, '1.20', 2]}"},
			want: []string{"a+go=1.20", "a+go=1.22", "a+go=2"},
		},
		"unsafe values are sanitised and hashed": {
			give: []string{"matrix: {v: ['claude sonnet', 'a/b', héllo, '']}"},
			want: []string{"a+v=a_b-c14cddc0", "a+v=claude_sonnet-28d031c2", "a+v=e3b0c442", "a+v=h_llo-3c48591d"},
		},
		"long values are cut and hashed": {
			give: []string{"matrix: {v: [" + strings.Repeat("x", 50) + "]}"},
			want: []string{"a+v=" + strings.Repeat("x", 40) + "-77cf1206"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			lines := append([]string{"version: 1", "jobs:", "  - id: a", "    prompt: 'hi {{ .matrix }}'"}, prefixed("    ", tt.give)...)
			var got []string
			for _, se := range sessionsOK(t, parseOK(t, t.TempDir(), doc(lines...), nil)) {
				got = append(got, se.Key)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func prefixed(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}

func TestSessionFields(t *testing.T) {
	give := doc(
		"version: 1",
		"defaults: {tool_timeout: 7m}",
		"jobs:",
		"  - id: eval",
		"    prompt: 'Use {{ .matrix.model }} on {{ .matrix.task }}, try {{ .repeat }} of {{ .job }} as {{ .key }}.'",
		"    system: 'Task {{ .matrix.task }}.'",
		"    repeat: 2",
		"    matrix: {task: [t1], model: [m1, m2]}",
		"    checks:",
		"      - {name: vet, run: go vet ./...}",
		"      - {name: test, run: go test ./..., timeout: 20m}",
		"    output_schema: {type: object, required: [ok], properties: {ok: {type: boolean}}}",
	)
	sessions := sessionsOK(t, parseOK(t, t.TempDir(), give, nil))
	require.Len(t, sessions, 4)
	se := sessions[3]
	assert.Equal(t, "eval+model=m2+task=t1.r2", se.Key)
	assert.Equal(t, "eval", se.JobID)
	assert.Equal(t, 2, se.Repeat)
	assert.Equal(t, 2, se.Repeats)
	assert.Equal(t, map[string]string{"model": "m2", "task": "t1"}, se.Matrix)
	assert.Equal(t, []string{"model", "task"}, se.MatrixKeys())
	assert.Equal(t, "Use m2 on t1, try 2 of eval as eval+model=m2+task=t1.r2.", se.Prompt)
	assert.Equal(t, "Task t1.", se.System)
	assert.Equal(t, "m2", se.Settings.Model)
	assert.Equal(t, []Check{
		{Name: "vet", Run: "go vet ./...", Timeout: 7 * time.Minute},
		{Name: "test", Run: "go test ./...", Timeout: 20 * time.Minute},
	}, se.Checks)
	assert.JSONEq(t, `{"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"}}}`, string(se.OutputSchema))

	sch, err := CompileOutputSchema(se.OutputSchema)
	require.NoError(t, err)
	assert.NoError(t, sch.Validate(map[string]any{"ok": true}))
	assert.Error(t, sch.Validate(map[string]any{"ok": "yes"}))
}

func TestVariables(t *testing.T) {
	env := map[string]string{"SET": "value", "EMPTY": ""}
	tests := map[string]struct {
		give string
		want string
	}{
		"set":                    {give: "${SET}", want: "value"},
		"default when unset":     {give: "${UNSET:-fallback}", want: "fallback"},
		"default when empty":     {give: "${EMPTY:-fallback}", want: "fallback"},
		"set wins over default":  {give: "${SET:-fallback}", want: "value"},
		"empty without default":  {give: "[${EMPTY}]", want: "[]"},
		"empty default":          {give: "[${UNSET:-}]", want: "[]"},
		"default kept literally": {give: "${UNSET:-a:-b $c}", want: "a:-b $c"},
		"double dollar":          {give: "costs $$5 and $${SET}", want: "costs $5 and ${SET}"},
		"lone dollars":           {give: "a $b c$", want: "a $b c$"},
		"in the middle":          {give: "x${SET}y${SET}z", want: "xvalueyvaluez"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, _, err := expandVars(tt.give, mapEnv(env))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)

			s := parseOK(t, t.TempDir(), doc("version: 1", "jobs:", "  - id: a", "    prompt: '"+tt.give+"'"), env)
			assert.Equal(t, tt.want, s.Jobs[0].Prompt, "in a spec")
		})
	}
}

func TestVariablesInEveryKindOfValue(t *testing.T) {
	env := map[string]string{"TURNS": "9", "T": "45s", "P": "openai", "COST": "1.5", "TOKEN": "abc"}
	give := doc(
		"version: 1",
		"concurrency: ${N:-2}",
		"defaults:",
		"  max_turns: ${TURNS}",
		"  timeout: ${T}",
		"  provider: ${P}",
		"  budget: {max_cost_usd: '${COST}'}",
		"  env: {TOKEN: '${TOKEN}', LITERAL: '$${TOKEN}'}",
		"jobs:",
		"  - id: a",
		"    prompt: hi",
		"    output_schema: {description: '${P}', '${P}': 1}",
	)
	s := parseOK(t, t.TempDir(), give, env)
	assert.Equal(t, 2, s.Concurrency)
	se := sessionsOK(t, s)[0]
	assert.Equal(t, 9, se.Settings.MaxTurns)
	assert.Equal(t, 45*time.Second, se.Settings.Timeout)
	assert.Equal(t, ProviderOpenAI, se.Settings.Provider)
	assert.InDelta(t, 1.5, se.Settings.Budget.MaxCostUSD, 1e-9)
	assert.Equal(t, map[string]string{"TOKEN": "abc", "LITERAL": "${TOKEN}"}, se.Settings.Env)
	assert.JSONEq(t, `{"description":"openai","${P}":1}`, string(se.OutputSchema), "keys are not expanded")
}

func TestPromptFileIsRelativeToTheSpec(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"specs/prompts/p.md": "Fix {{ .job }}.\n",
		"shared/q.md":        "Shared {{ .job }}.",
	})
	give := doc(
		"version: 1",
		"jobs:",
		"  - id: a",
		"    prompt_file: prompts/p.md",
		"  - id: b",
		"    prompt_file: ../shared/q.md",
		"  - id: c",
		"    prompt_file: "+filepath.Join(root, "shared", "q.md"),
	)
	// The working directory is the package directory, not root: only the spec's
	// directory can make these paths work.
	s := parseOK(t, filepath.Join(root, "specs"), give, nil)
	sessions := sessionsOK(t, s)
	require.Len(t, sessions, 3)
	assert.Equal(t, "Fix a.\n", sessions[0].Prompt)
	assert.Equal(t, "Shared b.", sessions[1].Prompt)
	assert.Equal(t, "Shared c.", sessions[2].Prompt)
}

func TestSessionsOfABuiltSpec(t *testing.T) {
	s := &Spec{
		Version: 1,
		Jobs: []Job{
			{ID: "a", Prompt: "{{ .matrix.m }}", Matrix: map[string][]string{"m": {"x", "y"}, "max_turns": {"3", "4"}}},
		},
	}
	sessions := sessionsOK(t, s)
	require.Len(t, sessions, 4)
	assert.Equal(t, "a+m=x+max_turns=3", sessions[0].Key)
	assert.Equal(t, 3, sessions[0].Settings.MaxTurns)
	assert.Equal(t, "y", sessions[3].Prompt)

	tests := map[string]struct {
		give Job
		want string
	}{
		"no prompt":            {give: Job{ID: "a"}, want: "jobs[0]: missing prompt"},
		"prompt file unread":   {give: Job{ID: "a", PromptFile: "p.md"}, want: "jobs[0].prompt_file: prompt file was not read"},
		"bad matrix value":     {give: Job{ID: "a", Prompt: "p", Matrix: map[string][]string{"max_turns": {"x"}}}, want: `jobs[0].matrix.max_turns[0]: "x" is not an integer`},
		"empty matrix list":    {give: Job{ID: "a", Prompt: "p", Matrix: map[string][]string{"m": {}}}, want: "jobs[0].matrix.m: must not be empty"},
		"negative repeat":      {give: Job{ID: "a", Prompt: "p", Repeat: -1}, want: "jobs[0].repeat: must be at least 1, got -1"},
		"missing template key": {give: Job{ID: "a", Prompt: "{{ .nope }}"}, want: `map has no entry for key "nope"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s := &Spec{Version: 1, Jobs: []Job{tt.give}}
			_, err := s.Sessions()
			var se *SpecError
			require.ErrorAs(t, err, &se)
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, s.Digest())
		})
	}
}

func TestRenderLimit(t *testing.T) {
	big := strings.Repeat("x", MaxPromptBytes/2)
	s := &Spec{Version: 1, Jobs: []Job{{ID: "a", Prompt: big + "{{ .job }}" + big}}}
	_, err := s.Sessions()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "output passes")
}

func TestNaturalCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"a.r2", "a.r10", -1},
		{"a.r10", "a.r2", 1},
		{"a", "a", 0},
		{"a", "a.r1", -1},
		{"a+m=1", "a+m=01", -1},
		{"B", "a", -1},
		{"x9y", "x10a", -1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, naturalCompare(tt.a, tt.b), "%q vs %q", tt.a, tt.b)
	}
}

func TestRenderedBytesLimit(t *testing.T) {
	give := doc("version: 1", "jobs:", "  - id: a", "    prompt_file: p.md", "    repeat: 700")
	_, problems := specProblems(t, give, map[string]string{"p.md": strings.Repeat("x", 100_000)}, nil)
	require.Len(t, problems, 1)
	assert.Equal(t, "jobs[0]", problems[0].Field)
	assert.Contains(t, problems[0].Message, "rendered prompts of the spec's sessions pass")
}

// TestMatrixNamesTheTemplatesRead checks the ways a prompt or system template may read a
// matrix name that overrides no setting: each makes the name valid.
func TestMatrixNamesTheTemplatesRead(t *testing.T) {
	tests := map[string]struct {
		prompt, system string
		files          map[string]string
	}{
		"field":                {prompt: "Use {{ .matrix.lang }}."},
		"field from the root":  {prompt: "{{ with .job }}Use {{ $.matrix.lang }}.{{ end }}"},
		"index":                {prompt: `Use {{ index .matrix "lang" }}.`},
		"index from the root":  {prompt: `{{ with .job }}{{ index $.matrix "lang" }}{{ end }}`},
		"in a condition":       {prompt: `{{ if eq .matrix.lang "go" }}Go{{ else }}Other{{ end }}`},
		"in a pipeline":        {prompt: `{{ .matrix.lang | printf "%q" }}`},
		"range over the whole": {prompt: "{{ range $k, $v := .matrix }}{{ $k }}={{ $v }} {{ end }}"},
		"with the whole":       {prompt: "{{ with .matrix }}{{ .lang }}{{ end }}"},
		"the whole printed":    {prompt: "Settings: {{ .matrix }}"},
		"the system only":      {prompt: "Hi.", system: "Write {{ .matrix.lang }}."},
		"a prompt file":        {files: map[string]string{"p.txt": "Use {{ .matrix.lang }}."}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			lines := []string{"version: 1", "jobs:", "  - id: a", "    matrix: {lang: [go, rust]}"}
			if tt.prompt != "" {
				lines = append(lines, "    prompt: "+strconv.Quote(tt.prompt))
			} else {
				lines = append(lines, "    prompt_file: p.txt")
			}
			if tt.system != "" {
				lines = append(lines, "    system: "+strconv.Quote(tt.system))
			}
			assert.Len(t, sessionsOK(t, parseOK(t, dir, doc(lines...), nil)), 2)
		})
	}
}

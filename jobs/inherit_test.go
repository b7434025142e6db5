package jobs

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builtin is the resolution of a spec that sets nothing, in directory dir.
func builtin(dir string) Resolved {
	return Resolved{
		MaxTurns: 50, MaxTokens: 16384,
		Timeout: 30 * time.Minute, IdleTimeout: 5 * time.Minute, ToolTimeout: 10 * time.Minute,
		Tools:     []Tool{ToolRead, ToolWrite, ToolEdit, ToolBash, ToolGlob, ToolGrep, ToolTodoWrite, ToolTask},
		BashMode:  "0467",
		Workspace: Workspace{Dir: dir, Mode: WorkspaceCopy},
		Env:       map[string]string{}, Secrets: []string{}, Skills: []string{},
	}
}

func TestInheritance(t *testing.T) {
	tests := map[string]struct {
		defaults []string // lines under defaults:
		job      []string // lines of the job after its id and prompt
		want     func(r *Resolved, dir string)
	}{
		"built-in defaults": {want: func(*Resolved, string) {}},
		"defaults only": {
			defaults: []string{"model: m", "provider: openai"},
			want:     func(r *Resolved, _ string) { r.Model, r.Provider = "m", ProviderOpenAI },
		},
		"job overrides one field and inherits the others": {
			defaults: []string{"model: a", "max_turns: 7"},
			job:      []string{"model: b"},
			want:     func(r *Resolved, _ string) { r.Model, r.MaxTurns = "b", 7 },
		},
		"explicit zero overrides": {
			defaults: []string{"retries: 2"},
			job:      []string{"retries: 0"},
			want:     func(*Resolved, string) {},
		},
		"explicit empty tools offer none": {
			defaults: []string{"tools: [Read, Bash]"},
			job:      []string{"tools: []"},
			want:     func(r *Resolved, _ string) { r.Tools = []Tool{} },
		},
		"budget merges per field": {
			defaults: []string{"budget: {max_cost_usd: 2.5}"},
			job:      []string{"budget: {max_tokens: 1000}"},
			want:     func(r *Resolved, _ string) { r.Budget = Budget{MaxCostUSD: 2.5, MaxTokens: 1000} },
		},
		"cache priming off, and back on in a job": {
			defaults: []string{"cache: {prime: false}"},
			job:      []string{"cache: {prime: true}"},
			want:     func(*Resolved, string) {},
		},
		"cache priming from the matrix": {
			job:  []string{"matrix: {cache.prime: [false]}"},
			want: func(r *Resolved, _ string) { r.Cache = Cache{NoPrime: true} },
		},
		"cache priming off in a job": {
			job:  []string{"cache: {prime: false}"},
			want: func(r *Resolved, _ string) { r.Cache = Cache{NoPrime: true} },
		},
		"limits merge per field": {
			defaults: []string{"limits: {max_response_bytes: 1048576}"},
			job:      []string{"limits: {max_tool_input_bytes: 65536}"},
			want: func(r *Resolved, _ string) {
				r.Limits = Limits{MaxResponseBytes: 1 << 20, MaxToolInputBytes: 64 << 10}
			},
		},
		"workspace merges per field": {
			defaults: []string{"workspace: {dir: sub, mode: copy}"},
			job:      []string{"workspace: {mode: worktree}"},
			want: func(r *Resolved, dir string) {
				r.Workspace = Workspace{Dir: filepath.Join(dir, "sub"), Mode: WorkspaceWorktree}
			},
		},
		"absolute workspace dir is kept": {
			job:  []string{"workspace: {dir: /srv/repo}"},
			want: func(r *Resolved, _ string) { r.Workspace.Dir = "/srv/repo" },
		},
		"thinking merges per field": {
			defaults: []string{"thinking: {mode: enabled, budget: 4000}"},
			job:      []string{"thinking: {budget: 8000, effort: high}"},
			want: func(r *Resolved, _ string) {
				r.Thinking = Thinking{Mode: ThinkingEnabled, Budget: 8000, Effort: EffortHigh}
			},
		},
		"env merges per variable": {
			defaults: []string{"env: {A: 1, B: 2}"},
			job:      []string{"env: {B: three, C: true}"},
			want:     func(r *Resolved, _ string) { r.Env = map[string]string{"A": "1", "B": "three", "C": "true"} },
		},
		"secrets are joined": {
			defaults: []string{"secrets: [B, A]"},
			job:      []string{"secrets: [C, B]"},
			want:     func(r *Resolved, _ string) { r.Secrets = []string{"A", "B", "C"} },
		},
		"skills are replaced": {
			defaults: []string{"skills: [a, b]"},
			job:      []string{"skills: [c]"},
			want:     func(r *Resolved, _ string) { r.Skills = []string{"c"} },
		},
		"durations": {
			defaults: []string{"timeout: 1h", "tool_timeout: 90s"},
			job:      []string{"idle_timeout: 1m30s"},
			want: func(r *Resolved, _ string) {
				r.Timeout, r.ToolTimeout, r.IdleTimeout = time.Hour, 90*time.Second, 90*time.Second
			},
		},
		"quoted bash_mode": {
			job:  []string{`bash_mode: "0777"`},
			want: func(r *Resolved, _ string) { r.BashMode = "0777" },
		},
		"matrix beats job and defaults": {
			defaults: []string{"model: a"},
			job:      []string{"model: b", "matrix: {model: [c]}"},
			want:     func(r *Resolved, _ string) { r.Model = "c" },
		},
		"matrix overrides a nested field only": {
			defaults: []string{"thinking: {mode: enabled, effort: low}"},
			job:      []string{"matrix: {thinking.effort: [max]}"},
			want:     func(r *Resolved, _ string) { r.Thinking = Thinking{Mode: ThinkingEnabled, Effort: EffortMax} },
		},
		"sandbox merges per field": {
			defaults: []string{"sandbox: {level: landlock, writable: [~/.cache/go-build, /var/tmp/x]}"},
			job:      []string{"sandbox: {readable: [data]}"},
			want: func(r *Resolved, dir string) {
				r.Sandbox = Sandbox{
					Level:    SandboxLandlock,
					Writable: []string{"~/.cache/go-build", "/var/tmp/x"},
					Readable: []string{filepath.Join(dir, "data")},
				}
			},
		},
		"sandbox lists are replaced": {
			defaults: []string{"sandbox: {writable: [/a, /b], readable: [/r]}"},
			job:      []string{"sandbox: {writable: [/c]}"},
			want: func(r *Resolved, _ string) {
				r.Sandbox = Sandbox{Writable: []string{"/c"}, Readable: []string{"/r"}}
			},
		},
		"an empty sandbox list clears the defaults' list": {
			defaults: []string{"sandbox: {level: strict, writable: [/a]}"},
			job:      []string{"sandbox: {writable: []}"},
			want:     func(r *Resolved, _ string) { r.Sandbox = Sandbox{Level: SandboxStrict} },
		},
		"sandbox paths": {
			job: []string{`sandbox: {writable: ["~", ~/x/../y, sub/../out, ../up, /var//tmp/x/]}`},
			want: func(r *Resolved, dir string) {
				r.Sandbox.Writable = []string{"~", "~/x/../y", filepath.Join(dir, "out"), filepath.Join(filepath.Dir(dir), "up"), "/var/tmp/x"}
			},
		},
		"level off is written out": {
			defaults: []string{"sandbox: {level: strict}"},
			job:      []string{"sandbox: {level: off}"},
			want:     func(r *Resolved, _ string) { r.Sandbox.Level = SandboxOff },
		},
		"network allow list is replaced and lower-cased": {
			defaults: []string{"network: {allow: [api.github.com]}"},
			job:      []string{`network: {allow: [API.Example.com, "*.githubusercontent.com", .golang.org, 10.0.0.1, "2001:DB8::1"]}`},
			want: func(r *Resolved, _ string) {
				r.Network.Allow = []string{"api.example.com", "*.githubusercontent.com", ".golang.org", "10.0.0.1", "2001:db8::1"}
			},
		},
		"an empty allow list allows any host": {
			defaults: []string{"network: {allow: [a.example]}"},
			job:      []string{"network: {allow: []}"},
			want:     func(*Resolved, string) {},
		},
		"matrix overrides the sandbox level only": {
			defaults: []string{"sandbox: {level: strict, writable: [/w]}"},
			job:      []string{"matrix: {sandbox.level: [off]}"},
			want:     func(r *Resolved, _ string) { r.Sandbox = Sandbox{Level: SandboxOff, Writable: []string{"/w"}} },
		},
		"matrix numbers and durations": {
			job: []string{"matrix: {max_turns: [12], timeout: [2h], budget.max_cost_usd: [0.5]}"},
			want: func(r *Resolved, _ string) {
				r.MaxTurns, r.Timeout, r.Budget.MaxCostUSD = 12, 2*time.Hour, 0.5
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			lines := []string{"version: 1"}
			if tt.defaults != nil {
				lines = append(lines, "defaults:")
				for _, l := range tt.defaults {
					lines = append(lines, "  "+l)
				}
			}
			lines = append(lines, "jobs:", "  - id: a", "    prompt: hi")
			for _, l := range tt.job {
				lines = append(lines, "    "+l)
			}
			dir := t.TempDir()
			s := parseOK(t, dir, doc(lines...), nil)
			sessions := sessionsOK(t, s)
			require.Len(t, sessions, 1)
			want := builtin(s.Dir())
			tt.want(&want, s.Dir())
			assert.Equal(t, want, sessions[0].Settings)
		})
	}
}

// TestInheritanceOfEveryField sets each setting in defaults, then in the job too, and
// checks that the defaults' value arrives when the job is silent and the job's wins
// when it speaks: no field is forgotten by the merge.
func TestInheritanceOfEveryField(t *testing.T) {
	values := map[string][2]string{ // yaml key → defaults value, job value
		"provider":     {"openai", "anthropic"},
		"model":        {"m1", "m2"},
		"base_url":     {"http://a", "http://b"},
		"max_turns":    {"3", "4"},
		"max_tokens":   {"100", "200"},
		"timeout":      {"1m", "2m"},
		"idle_timeout": {"3m", "4m"},
		"tool_timeout": {"5m", "6m"},
		"tools":        {"[Read]", "[Bash]"},
		"bash_mode":    {"'0400'", "'0007'"},
		"budget":       {"{max_cost_usd: 1}", "{max_cost_usd: 2}"},
		"limits":       {"{max_response_bytes: 1000}", "{max_response_bytes: 2000}"},
		"retries":      {"1", "2"},
		"workspace":    {"{mode: shared}", "{mode: worktree}"},
		"env":          {"{A: x}", "{A: y}"},
		"secrets":      {"[A]", "[B]"},
		"thinking":     {"{effort: low}", "{effort: high}"},
		"max_context":  {"1000", "2000"},
		"skills":       {"[s1]", "[s2]"},
		"script":       {"one.txt", "two.txt"},
		"sandbox":      {"{level: strict}", "{level: off}"},
		"network":      {"{allow: [a.example]}", "{allow: [b.example]}"},
		"mcp_servers":  {"{a: {command: one}}", "{a: {command: two}}"},
		"cache":        {"{prime: false}", "{prime: true}"},
	}
	for _, f := range fieldsOf(settingsType) {
		t.Run(f.name, func(t *testing.T) {
			v, ok := values[f.name]
			require.True(t, ok, "add a test value for the new setting %q", f.name)
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"one.txt": "x", "two.txt": "y"})
			resolved := func(lines ...string) Resolved {
				base := []string{"version: 1", "defaults:", "  " + f.name + ": " + v[0], "jobs:", "  - id: a", "    prompt: hi"}
				sessions := sessionsOK(t, parseOK(t, dir, doc(append(base, lines...)...), nil))
				require.Len(t, sessions, 1)
				return sessions[0].Settings
			}
			inherited := resolved()
			overridden := resolved("    " + f.name + ": " + v[1])
			assert.NotEqual(t, builtin(dir), inherited, "the defaults' %s is ignored", f.name)
			assert.NotEqual(t, inherited, overridden, "the job's %s is ignored", f.name)
		})
	}
}

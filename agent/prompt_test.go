package agent_test

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

var update = flag.Bool("update", false, "rewrite golden files")

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// TestSystemPrompt pins the rendered system prompt: the layers in order, the stable
// ones first.
func TestSystemPrompt(t *testing.T) {
	tests := map[string]agent.Config{
		"all_layers": {Tools: nil, System: "Only touch files under src/.", Skills: []string{"go-style"}},
		"no_tools":   {Tools: []string{}, System: ""},
		"read_only":  {Tools: []string{"Read", "Grep", "Glob"}, BashMode: "0404"},
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			ws, home := t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(ws, "AGENTS.md"), "Run make test before you finish.\n")
			writeFile(t, filepath.Join(ws, "CLAUDE.md"), "Ignored: AGENTS.md comes first.\n")
			writeFile(t, filepath.Join(home, "CLAUDE.md"), "Prefer small commits.\n")
			writeFile(t, filepath.Join(ws, "skills", "go-style", "SKILL.md"), "---\n# Go style\nFormat with gofmt; keep functions short.\nFiles: ${AGENTRUN_SKILL_DIR}/rules.txt\n")
			writeFile(t, filepath.Join(home, "skills", "release", "SKILL.md"), "# Release\nTag and push a release.\n")
			cfg.Workspace, cfg.InstructionHome = ws, home
			p := &canned{responses: [][]protocol.Message{{text("ok"), stop("end_turn")}}}
			s, err := agent.New(cfg, agent.Deps{Provider: p, Sink: &recorder{}})
			require.NoError(t, err)
			s.Run(t.Context(), "go")
			require.Len(t, p.requests, 1)
			got := strings.NewReplacer(ws, "$WORKSPACE", home, "$HOME", runtime.GOOS+"/"+runtime.GOARCH, "$PLATFORM").
				Replace(p.requests[0].SystemPrompt())
			golden := filepath.Join("testdata", "TestSystemPrompt", name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
		})
	}
}

func TestMissingSkill(t *testing.T) {
	_, err := agent.New(agent.Config{Workspace: t.TempDir(), Skills: []string{"nope"}},
		agent.Deps{Provider: &canned{}, Sink: &recorder{}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `skill "nope" not found`)
}

func TestSummaryInPrompt(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, agent.SummaryFile), "Task focus: tests\nProgress: half done")
	p := &canned{responses: [][]protocol.Message{{text("ok"), stop("end_turn")}}}
	s, err := agent.New(agent.Config{Workspace: t.TempDir(), System: "job text"},
		agent.Deps{Provider: p, Sink: &recorder{}, Store: &agent.DirStore{Dir: dir, Files: sink.NewFiles(nil)}})
	require.NoError(t, err)
	s.Run(t.Context(), "go")
	req := p.requests[0]
	assert.Contains(t, req.System, "<job-instructions>\njob text", "the job's text is part of the cached prefix")
	assert.NotContains(t, req.System, "Task focus", "a summary changes with compaction: it stays out of the cached prefix")
	assert.Contains(t, req.SystemTail, "<context-snapshot>\nTask focus: tests")
}

// TestPrefixAcrossWorkspaces checks that sessions of one job in workspaces of their own
// (copies, the default) send one cacheable prefix: the workspace path, which differs,
// is in the tail after the breakpoint, not in the prefix their digest covers.
func TestPrefixAcrossWorkspaces(t *testing.T) {
	var reqs []protocol.Request
	for range 2 {
		ws := t.TempDir()
		writeFile(t, filepath.Join(ws, "AGENTS.md"), "Run make test before you finish.\n")
		p := &canned{responses: [][]protocol.Message{{text("ok"), stop("end_turn")}}}
		s, err := agent.New(agent.Config{Workspace: ws, System: "job text"}, agent.Deps{Provider: p, Sink: &recorder{}})
		require.NoError(t, err)
		s.Run(t.Context(), "go")
		require.Len(t, p.requests, 1)
		assert.Contains(t, p.requests[0].SystemTail, "workspace: "+ws)
		assert.NotContains(t, p.requests[0].System, ws)
		reqs = append(reqs, p.requests[0])
	}
	assert.Equal(t, reqs[0].System, reqs[1].System)
	assert.Equal(t, reqs[0].PrefixDigest(), reqs[1].PrefixDigest())
	assert.NotEqual(t, reqs[0].SystemTail, reqs[1].SystemTail)
}

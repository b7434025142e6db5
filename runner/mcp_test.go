package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/mcpclient/mcptest"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/protocol/eventschema"
	"github.com/agentrun/agentrun/runner"
)

// TestMCPSessions runs sessions with a stdio MCP server in their sandbox
// (mcp-test-server, the SDK-built test server) and a streamable-HTTP one: a session that
// calls their tools, one whose required server exits at start (error_mcp before any
// model call), and one whose optional server fails (a warning; the session goes on).
func TestMCPSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mark := "runner-" + filepath.Base(filepath.Dir(dir)) // TestMCPSessions and a number unique to this run
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	bin, err := mcptest.Link(t, ws, "mcp-test-server")
	require.NoError(t, err)
	web := mcptest.HTTP("t0k3n-" + "SECRETVALUE")
	defer web.Close()
	lookup := func(name string) (string, bool) {
		if name == "MCP_TOKEN" {
			return "t0k3n-SECRETVALUE", true
		}
		return "", false
	}
	specText := `version: 1
defaults:
  timeout: 60s
  workspace: {dir: ws, mode: shared} # the server binary lives in ws: no copies of it
  tools: [Read]
  mcp_servers:
    test:
      command: ` + bin + `
      env: {` + mcptest.Env + `: ok}
      required: true
      tools: {deny: [garble, crash]}
    web:
      url: ` + web.URL + `/mcp
      headers: {Authorization: "Bearer ${MCP_TOKEN}"}
      tools: {allow: [echo]}
jobs:
  - {id: calls, model: mcp, prompt: Ask the server.}
  - id: required-down
    model: mcp
    prompt: Never asked.
    mcp_servers:
      test: {command: ` + bin + `, env: {` + mcptest.Env + `: exit}, required: true}
  - id: optional-down
    model: mcp
    prompt: Ask the server.
    mcp_servers:
      web: {enabled: false}
      broken: {command: ./no-such-server}
  - id: timeout-while-connecting
    model: mcp
    timeout: 1s
    prompt: Never asked.
    mcp_servers:
      test: {command: ` + bin + `, env: {` + mcptest.Env + `: hang-init, ` + mcptest.MarkEnv + `: ` + mark + `}, required: true, startup_timeout: 30s}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "jobs.yaml"), []byte(specText), 0o644))
	spec, err := jobs.Load(filepath.Join(dir, "jobs.yaml"), lookup)
	require.NoError(t, err)
	out := filepath.Join(dir, "out")
	p := newInProcess(loadScripts(t))
	sum, err := newRunner(t, runner.Options{Out: out, Providers: p, LookupEnv: lookup,
		Environ: []string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=sk-ant-NOT-FOR-TOOLS"},
	}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Len(t, sum.Sessions, 4)
	left, err := mcptest.Processes(mark)
	require.NoError(t, err)
	assert.Empty(t, left, "no server outlives its session")

	results := map[string]protocol.Result{}
	for _, key := range []string{"calls", "required-down", "optional-down", "timeout-while-connecting"} {
		b, err := os.ReadFile(filepath.Join(out, "sessions", key, "result.json"))
		require.NoError(t, err)
		var r protocol.Result
		require.NoError(t, json.Unmarshal(b, &r))
		results[key] = r
	}

	calls := results["calls"]
	assert.Equal(t, protocol.StatusSuccess, calls.Status, "%+v", calls.Error)
	assert.Equal(t, "The server says 42.", calls.Result)
	assert.Equal(t, []protocol.MCPServer{
		{Name: "test", Transport: "stdio", Status: protocol.MCPConnected, ToolCount: 8, Required: true},
		{Name: "web", Transport: "http", Status: protocol.MCPConnected, ToolCount: 1},
	}, calls.MCPServers)
	events := readEvents(t, filepath.Join(out, "sessions", "calls", "events.jsonl"), true)
	start := events[0].Session
	require.NotNil(t, start)
	assert.Contains(t, start.Tools, "mcp__test__echo")
	assert.Contains(t, start.Tools, "mcp__web__echo")
	assert.NotContains(t, start.Tools, "mcp__web__add", "allow lists echo only")
	assert.NotContains(t, start.Tools, "mcp__test__crash", "deny")
	assert.Len(t, start.MCPServers, 2)
	var statuses []string
	var serverResults []protocol.ToolResult
	for _, m := range events {
		switch m.Kind {
		case protocol.KindMCPStatus:
			statuses = append(statuses, m.MCP.Name+" "+m.MCP.Status)
		case protocol.KindToolCall:
			assert.Equal(t, "test", m.Call.Server, m.Call.Name)
		case protocol.KindToolResult:
			serverResults = append(serverResults, m.Result)
		default:
			// Other kinds are not under test.
		}
	}
	assert.Equal(t, []string{"test connected", "web connected"}, statuses, "after session_start, before the first model call")
	require.Len(t, serverResults, 4)
	assert.Equal(t, "echo: hello", serverResults[0].Content)
	env := serverResults[1].Content
	assert.Contains(t, env, "cwd="+realPath(t, ws)+"\n", "the workspace is its folder")
	assert.NotContains(t, env, "sk-ant-NOT-FOR-TOOLS", "no provider key reaches the server")
	assert.Contains(t, serverResults[2].Content, `"sum":42`)
	big := serverResults[3]
	assert.False(t, big.IsError)
	assert.LessOrEqual(t, len(big.Content), 100_000, "a 1 MB result is capped like any tool's")
	m := regexp.MustCompile(`\n\[\.\.\. truncated (\d+) bytes \.\.\.\]\n`).FindStringSubmatch(big.Content)
	require.NotNil(t, m, "the cut is marked")
	dropped, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	assert.Equal(t, 1<<20, len(big.Content)-len(m[0])+dropped, "what is kept and what the marker counts make the whole result")

	down := results["required-down"]
	assert.Equal(t, protocol.StatusMCP, down.Status)
	assert.True(t, down.IsError)
	require.NotNil(t, down.Error)
	assert.Equal(t, protocol.ErrMCP, down.Error.Kind)
	assert.Contains(t, down.Error.Message, "required MCP server test did not connect (failed): the server exited")
	assert.Contains(t, down.Error.Message, "exit status 1")
	assert.Zero(t, down.NumTurns)
	var kinds []string
	for _, m := range readEvents(t, filepath.Join(out, "sessions", "required-down", "events.jsonl"), true) {
		kinds = append(kinds, m.Kind.EventType())
	}
	assert.Equal(t, []string{"session_start", "mcp_status", "error", "mcp_status", "result"}, kinds, "no model call was made (web is inherited)")

	opt := results["optional-down"]
	assert.Equal(t, protocol.StatusSuccess, opt.Status, "%+v", opt.Error)
	require.Len(t, opt.MCPServers, 2)
	assert.Equal(t, protocol.MCPFailed, opt.MCPServers[0].Status)
	assert.Equal(t, "broken", opt.MCPServers[0].Name)
	var warned bool
	for _, m := range readEvents(t, filepath.Join(out, "sessions", "optional-down", "events.jsonl"), true) {
		if m.Kind == protocol.KindError && m.Err.Kind == protocol.ErrMCP {
			warned = strings.Contains(m.Err.Message, "optional MCP server broken is failed")
		}
	}
	assert.True(t, warned, "a warning event")

	// The session's own timeout, not the server, ended the session that was connecting.
	assert.Equal(t, protocol.StatusTimeout, results["timeout-while-connecting"].Status)
	assert.Equal(t, "failed", results["timeout-while-connecting"].MCPServers[0].Status)

	// The token the http server's header reads is a secret: in no artifact.
	err = filepath.Walk(out, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "SECRETVALUE", path)
		return nil
	})
	require.NoError(t, err)
	files, err := eventschema.ValidateTree(out)
	require.NoError(t, err)
	assert.Equal(t, 8, files)
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	require.NoError(t, err)
	return r
}

package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/mcpclient/mcptest"
	"github.com/agentrun/agentrun/protocol/eventschema"
)

// mcpScript calls a tool of each test server.
const mcpScript = `steps:
  - tool_calls:
      - {name: mcp__test__echo, input: {text: from exec}}
      - {name: mcp__web__add, input: {a: 1, b: 2}}
  - text: Both answered.
`

// TestExecMCPConfig runs exec with a Claude Code .mcp.json as it is: a stdio server
// (mcp-test-server, the SDK-built test server) and a streamable-HTTP one whose
// bearer token comes from the environment.
func TestExecMCPConfig(t *testing.T) {
	t.Parallel()
	web := mcptest.HTTP("tok-EXECSECRET")
	defer web.Close()
	dir, env, script := execSetup(t, mcpScript)
	bin, err := mcptest.Link(t, dir, "mcp-test-server")
	require.NoError(t, err)
	writeFile(t, dir, ".mcp.json", `{
  "mcpServers": {
    "test": {"command": "`+bin+`", "args": [], "env": {"`+mcptest.Env+`": "ok"}},
    "web": {"type": "http", "url": "`+web.URL+`/mcp", "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}}
  }
}`)
	env = append(env, "WEB_TOKEN=tok-EXECSECRET")
	for _, format := range []string{"stream-json", "claude"} {
		t.Run(format, func(t *testing.T) {
			o := agentrun(t, invocation{args: []string{"exec", "--mcp-config", ".mcp.json", "--script", script,
				"--output-format", format, "Ask both."}, env: env, dir: dir})
			require.Equal(t, 0, o.code, o.stderr)
			assert.NotContains(t, o.stdout+o.stderr, "EXECSECRET")
			lines := jsonLines(t, o.stdout)
			if format == "claude" {
				init := lines[0]
				assert.Equal(t, "init", init["subtype"])
				assert.Equal(t, []any{map[string]any{"name": "test", "status": "connected"},
					map[string]any{"name": "web", "status": "connected"}}, init["mcp_servers"])
				assert.Contains(t, init["tools"], "mcp__test__echo")
				assert.Contains(t, o.stdout, `"content":"echo: from exec"`)
				return
			}
			for _, l := range strings.Split(strings.TrimSpace(o.stdout), "\n") {
				assert.NoError(t, eventschema.ValidateLine([]byte(l)), l)
			}
			var servers []string
			for _, ev := range lines {
				switch ev["type"] {
				case "mcp_status":
					servers = append(servers, ev["server"].(string)+" "+ev["status"].(string))
				case "tool_result":
					assert.NotEmpty(t, ev["server"])
					assert.Equal(t, false, ev["is_error"], ev["content"])
				}
			}
			assert.Equal(t, []string{"test connected", "web connected"}, servers)
			last := lines[len(lines)-1]
			assert.Equal(t, "success", last["status"])
			assert.Len(t, last["mcp_servers"], 2)
		})
	}
}

// TestExecMCPFailures checks a required server that does not connect (exit 1,
// error_mcp, no model call) and a config file with mistakes (exit 2, every problem
// with its place).
func TestExecMCPFailures(t *testing.T) {
	t.Parallel()
	dir, env, script := execSetup(t, mcpScript)
	bin, err := mcptest.Link(t, dir, "mcp-test-server")
	require.NoError(t, err)
	writeFile(t, dir, "down.json", `{"mcpServers": {"test": {"command": "`+bin+`", "env": {"`+mcptest.Env+`": "hang-init"},
  "required": true, "startup_timeout": "300ms"}}}`)
	o := agentrun(t, invocation{args: []string{"exec", "--mcp-config", "down.json", "--script", script,
		"--output-format", "stream-json", "Ask."}, env: env, dir: dir})
	assert.Equal(t, 1, o.code, o.stderr)
	lines := jsonLines(t, o.stdout)
	last := lines[len(lines)-1]
	assert.Equal(t, "error_mcp", last["status"])
	assert.Contains(t, last["error"].(map[string]any)["message"], "required MCP server test did not connect (timeout): no answer within 300ms")
	for _, ev := range lines {
		assert.NotEqual(t, "text", ev["type"], "no model call")
	}

	writeFile(t, dir, "bad.json", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\", \"url\": \"http://h/mcp\"},\n  \"b\": {\"type\": \"sse\", \"url\": \"http://h/sse\"}\n}}\n")
	o = agentrun(t, invocation{args: []string{"exec", "--mcp-config", "bad.json", "--script", script, "Ask."}, env: env, dir: dir})
	assert.Equal(t, 2, o.code, o.stderr)
	assert.Contains(t, o.stderr, "agentrun: invalid MCP config:\nbad.json:2:32: mcpServers.a.url: set either command (stdio, at 2:20)")
	assert.Contains(t, o.stderr, "bad.json:3:17: mcpServers.b.type: sse, the deprecated HTTP+SSE transport, is not supported")
}

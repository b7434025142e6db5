package mcpclient_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/mcpclient"
	"github.com/agentrun/agentrun/protocol"
)

// everythingPackage is the reference MCP server, pinned so that the test changes only
// when it is bumped here.
const everythingPackage = "@modelcontextprotocol/server-everything@2026.8.31"

// TestServerEverything runs the MCP reference server from npm over stdio in the
// session's sandbox: its tools are listed and offered, calls come back with their
// text, structured content and isError, and its elicitation and sampling requests are
// declined with an event. It needs npm and node (and the npm registry the first time;
// the package is kept in the user cache folder).
func TestServerEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the reference server test installs an npm package")
	}
	entry := everythingServer(t)
	h := newHarness(t)
	s := h.connect(mcpConfig("everything", entry, 60*time.Second))
	st := s.Statuses()[0]
	require.Equal(t, protocol.MCPConnected, st.Status, st.Reason)
	assert.GreaterOrEqual(t, st.ToolCount, 10)
	offered := map[string]bool{}
	for _, sp := range s.Specs() {
		offered[sp.Name] = true
		assert.NotEmpty(t, sp.InputSchema)
	}
	for _, name := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-env",
		"mcp__everything__trigger-elicitation-request", "mcp__everything__trigger-sampling-request"} {
		assert.True(t, offered[name], "offers %s", name)
	}

	out, isErr := call(t, s, "mcp__everything__echo", `{"message":"hello from agentrun"}`)
	assert.False(t, isErr, out)
	assert.Contains(t, out, "hello from agentrun")
	out, isErr = call(t, s, "mcp__everything__get-sum", `{"a":19,"b":23}`)
	assert.False(t, isErr, out)
	assert.Contains(t, out, "42")
	out, isErr = call(t, s, "mcp__everything__get-sum", `{"a":"x"}`)
	assert.True(t, isErr, "invalid arguments are the server's tool error: %s", out)
	out, isErr = call(t, s, "mcp__everything__get-env", `{}`)
	assert.False(t, isErr, out)
	assert.NotContains(t, out, "ANTHROPIC_API_KEY")
	assert.Contains(t, out, "PATH")

	out, _ = call(t, s, "mcp__everything__trigger-elicitation-request", `{}`)
	assert.Contains(t, out, "decline")
	out, _ = call(t, s, "mcp__everything__trigger-sampling-request", `{"prompt":"hi","maxTokens":10}`)
	assert.Contains(t, strings.ToLower(out), "sampling declined")
	declined := h.events.errors(protocol.ErrMCPDeclined)
	require.Len(t, declined, 2)
	assert.Contains(t, declined[0], "MCP server everything asked for user input")
	assert.Contains(t, declined[1], "MCP server everything asked for a model completion (sampling)")
}

func mcpConfig(name, entry string, startup time.Duration) mcpclient.Config {
	return mcpclient.Config{Name: name, Command: "node", Args: []string{entry, "stdio"},
		StartupTimeout: startup, CallTimeout: 30 * time.Second}
}

// everythingServer returns the entry point of the reference server, installing it into
// the user cache folder the first time. It skips the test when npm or node is absent.
func everythingServer(t *testing.T) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: the reference MCP server test needs npm and node")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the reference MCP server test needs npm and node")
	}
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	key := strings.NewReplacer("@", "", "/", "_").Replace(everythingPackage)
	root := filepath.Join(cache, "agentrun-test", "mcp", key)
	entry := filepath.Join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(filepath.Join(root, ".complete")); err == nil {
		return entry
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(root), 0o755))
	// Install into a fresh folder and rename it into place, so a concurrent or
	// interrupted install never leaves a half-filled cache behind.
	tmp, err := os.MkdirTemp(filepath.Dir(root), ".install-")
	require.NoError(t, err)
	defer func() { _ = os.RemoveAll(tmp) }()
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"name":"agentrun-mcp-check","private":true}`), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", everythingPackage)
	cmd.Dir = tmp
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm install %s:\n%s", everythingPackage, b)
	require.NoError(t, os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644))
	if err := os.Rename(tmp, root); err != nil && !os.IsExist(err) {
		if _, serr := os.Stat(filepath.Join(root, ".complete")); serr != nil {
			require.NoError(t, err, "move the npm install into the cache")
		}
	}
	return entry
}

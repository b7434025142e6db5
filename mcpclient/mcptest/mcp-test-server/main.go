// Command mcp-test-server is the stdio MCP server of agentrun's tests (mcptest's
// server, in the mode the AGENTRUN_TEST_MCP_SERVER variable names), a plain build that
// mcptest.Link puts in a test's workspace.
package main

import (
	"os"

	"github.com/agentrun/agentrun/mcpclient/mcptest"
)

func main() {
	mode := os.Getenv(mcptest.Env)
	if mode == "" {
		mode = "ok"
	}
	os.Exit(mcptest.ServeStdio(mode))
}

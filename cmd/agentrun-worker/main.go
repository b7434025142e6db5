// Command agentrun-worker is the confined process agentrun starts for a session's
// tools, checks and stdio MCP servers: the worker's code alone, installed next to
// agentrun, which uses it in place of re-executing itself.
package main

import (
	"fmt"
	"os"

	"github.com/agentrun/agentrun/worker"
)

func main() {
	worker.ExitIfWorker()
	fmt.Fprintf(os.Stderr, "%s is started by agentrun for its sessions' tools; it is not run by hand\n", worker.BinaryName)
	os.Exit(2)
}

package runner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
)

// TestJobToolsAreTheAgentTools holds the tool names a job spec accepts (jobs, which
// imports nothing of the agent) equal to the tools the agent has, in the same order:
// the runner hands a session's tools list to the agent as it is.
func TestJobToolsAreTheAgentTools(t *testing.T) {
	t.Parallel()
	var names []string
	for _, tool := range jobs.AllTools() {
		names = append(names, string(tool))
	}
	assert.Equal(t, agent.AllTools(), names)
}

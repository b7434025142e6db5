package runner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
)

// TestGitHubSingleSessionOutputs runs one session in GitHub mode and checks the step
// outputs claude-code-action users read: conclusion, session-id, structured-output, and
// an execution file in Claude Code's stream-json.
func TestGitHubSingleSessionOutputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := writeSpec(t, dir, `version: 1
jobs:
  - id: answer
    model: schema-good
    prompt: Answer in JSON.
    workspace: {dir: ., mode: copy}
    output_schema: {type: object, required: [answer], properties: {answer: {type: integer}}}
`)
	out := filepath.Join(dir, "out")
	outputFile := filepath.Join(dir, "github-output")
	require.NoError(t, os.WriteFile(outputFile, nil, 0o644))
	gh := &runner.GitHub{Output: outputFile, Log: &strings.Builder{}, Version: "test"}
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t)), GitHub: gh}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Totals.Passed, sum.Text())
	b, err := os.ReadFile(outputFile)
	require.NoError(t, err)
	outputs := readEnvFile(string(b))
	assert.Equal(t, "success", outputs["conclusion"])
	assert.Equal(t, sum.Sessions[0].SessionID, outputs["session-id"])
	assert.JSONEq(t, `{"answer": 42, "reason": "computed"}`, outputs["structured-output"])
	exec := outputs["execution-file"]
	require.True(t, filepath.IsAbs(exec), exec)
	f, err := os.Open(exec)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	require.True(t, sc.Scan())
	var first struct{ Type, Subtype, SessionID string }
	require.NoError(t, json.Unmarshal(sc.Bytes(), &first))
	assert.Equal(t, "system", first.Type)
	assert.Equal(t, "init", first.Subtype)
	var last string
	for sc.Scan() {
		last = sc.Text()
	}
	assert.Contains(t, last, `"type":"result"`)
	assert.Contains(t, last, `"subtype":"success"`)
}

// readEnvFile reads NAME=value and NAME<<DELIM lines of a GitHub environment file.
func readEnvFile(s string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				val = append(val, lines[i])
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		if name, val, ok := strings.Cut(line, "="); ok {
			out[name] = val
		}
	}
	return out
}

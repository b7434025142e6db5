package runner_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/transporttest"
)

// endpoints serves each session from the endpoint named by its model, with the real
// Anthropic transport.
type endpoints map[string]string

func (e endpoints) Provider(s jobs.Session, live runner.Liveness) (agent.Provider, runner.ProviderInfo, error) {
	c := transport.NewClient(anthropic.New(anthropic.Config{BaseURL: e[s.Settings.Model]}),
		transport.Options{MaxAttempts: 2, Activity: live.Activity, IdleTimeout: live.Idle})
	return c, runner.ProviderInfo{Name: "anthropic", Model: s.Settings.Model}, nil
}

// TestRunawayResponse streams answers far past the spec's limits from a loopback
// endpoint in real SSE: the session ends error_max_tokens with kind response_too_large,
// its error event says the same, no tool runs, and the artifacts stay near the limit.
func TestRunawayResponse(t *testing.T) {
	text := httptest.NewServer(transporttest.Runaway{Size: 20 << 20})
	t.Cleanup(text.Close)
	tool := httptest.NewServer(transporttest.Runaway{Size: 20 << 20, Tool: true})
	t.Cleanup(tool.Close)
	spec := writeSpec(t, t.TempDir(), `version: 1
defaults:
  tools: [Bash]
  sandbox: {level: "off"}
  limits: {max_response_bytes: 1048576, max_tool_input_bytes: 262144}
jobs:
  - {id: text, model: text, prompt: go}
  - {id: tool, model: tool, prompt: go}
`)
	out := filepath.Join(t.TempDir(), "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: endpoints{"text": text.URL, "tool": tool.URL}}).
		Run(context.Background(), spec)
	require.NoError(t, err)
	results := verifyOut(t, out, sum)
	tests := map[string]struct{ setting string }{
		"text": {setting: "limits.max_response_bytes"},
		"tool": {setting: "limits.max_tool_input_bytes"},
	}
	for key, tt := range tests {
		t.Run(key, func(t *testing.T) {
			res := results[key]
			require.NotNil(t, res)
			assert.Equal(t, protocol.StatusMaxTokens, res.Status)
			require.NotNil(t, res.Error)
			assert.Equal(t, protocol.ErrTooLarge, res.Error.Kind)
			assert.Contains(t, res.Error.Message, tt.setting)
			var errs []protocol.Error
			for _, m := range readEvents(t, filepath.Join(out, "sessions", key, "events.jsonl"), true) {
				assert.NotEqual(t, protocol.KindToolResult, m.Kind, "no tool ran")
				if m.Kind == protocol.KindError {
					errs = append(errs, m.Err)
				}
			}
			assert.Equal(t, []protocol.Error{*res.Error}, errs, "the error event is the result's error")
			for _, name := range []string{"stream.jsonl", "events.jsonl", "transcript.txt"} {
				size := fileSize(t, filepath.Join(out, "sessions", key, name))
				assert.Less(t, size, int64(4<<20), "%s holds about the limit, not the stream", name)
			}
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

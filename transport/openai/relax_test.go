package openai_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/openai"
	"github.com/agentrun/agentrun/transport/transporttest"
)

// TestReasoningEffortRefused sends a thinking request to a server that refuses
// reasoning_effort with a 400, as many OpenAI-compatible servers do: the client says so
// in a retry event and sends the request once more without the member, and only once.
func TestReasoningEffortRefused(t *testing.T) {
	refused := transporttest.Response{Status: 400, Header: map[string]string{"Content-Type": "application/json"},
		Body: []byte(`{"error":{"message":"unrecognized request argument supplied: reasoning_effort","type":"invalid_request_error"}}`)}
	tests := []struct {
		name         string
		give         []transporttest.Response
		thinking     protocol.Thinking
		wantText     bool
		wantRequests int
	}{
		{"refused, then answered without it", []transporttest.Response{refused, {Body: fixture(t, "usage_never_sent")}},
			protocol.Thinking{Mode: "enabled", Effort: "low"}, true, 2},
		{"refused twice: given up after one relaxed try", []transporttest.Response{refused, refused},
			protocol.Thinking{Mode: "enabled"}, false, 2},
		{"a 400 without thinking is not retried", []transporttest.Response{refused}, protocol.Thinking{}, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := transporttest.NewServer(t, tt.give...)
			client := transport.NewClient(openai.New(openai.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-k"}),
				transport.Options{MaxAttempts: 3, BaseDelay: time.Millisecond, Jitter: func() float64 { return 0 }})
			t.Cleanup(client.CloseIdleConnections)
			var retries []protocol.Message
			var text string
			var last protocol.Message
			for m := range client.Stream(context.Background(), protocol.Request{Model: "qwen3", Thinking: tt.thinking,
				Messages: []protocol.Turn{protocol.UserText("hi")}}) {
				switch m.Kind {
				case protocol.KindRetry:
					retries = append(retries, m)
				case protocol.KindText:
					text += m.Text
				default:
					// other kinds are not what this test reads
				}
				last = m
			}
			received := srv.Received()
			require.Len(t, received, tt.wantRequests)
			if tt.thinking.Mode != "" {
				assert.Contains(t, string(received[0].Body), `"reasoning_effort"`)
				require.Len(t, retries, 1, "the event that says what was dropped")
				assert.Contains(t, retries[0].Reason, "refused reasoning_effort")
				assert.NotContains(t, string(received[1].Body), "reasoning_effort", "the second request goes without it")
			}
			if tt.wantText {
				assert.Equal(t, "Done.", text)
				assert.Equal(t, protocol.KindStop, last.Kind)
				return
			}
			require.Equal(t, protocol.KindError, last.Kind)
			assert.True(t, strings.Contains(last.Err.Message, "reasoning_effort"), last.Err.Message)
		})
	}
}

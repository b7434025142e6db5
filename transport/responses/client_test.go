package responses_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/responses"
	"github.com/agentrun/agentrun/transport/transporttest"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "TestDecode", name+".sse"))
	require.NoError(t, err)
	return b
}

// TestClientStream runs the retrying client against scripted loopback servers.
func TestClientStream(t *testing.T) {
	success := transporttest.Response{Body: fixture(t, "unknown_events_ignored")}
	successLines := []string{
		`{"type":"text","content":"See go.dev."}`,
		`{"type":"usage","input_tokens":10,"output_tokens":4,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"kind":"agent"}`,
		`{"type":"stop","reason":"end_turn"}`,
	}
	tests := []struct {
		name         string
		give         []transporttest.Response
		want         []string
		wantRequests int
	}{
		{
			name: "429 then success",
			give: []transporttest.Response{{
				Status: 429, Header: map[string]string{"Content-Type": "application/json", "Retry-After": "0.002"},
				Body: []byte(`{"error":{"message":"Rate limit reached","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`),
			}, success},
			want: append([]string{
				`{"type":"retry","attempt":1,"delay_ms":2,"reason":"http_429: HTTP 429: Rate limit reached"}`,
			}, successLines...),
			wantRequests: 2,
		},
		{
			name: "response.failed then success",
			give: []transporttest.Response{{Body: fixture(t, "failed")}, success},
			want: append([]string{
				`{"type":"text","content":"Partial"}`,
				`{"type":"retry","attempt":1,"delay_ms":1,"reason":"server: The model failed to generate a response."}`,
			}, successLines...),
			wantRequests: 2,
		},
		{
			name: "EOF without response.completed then success",
			give: []transporttest.Response{{Body: fixture(t, "eof_without_completed")}, success},
			want: append([]string{
				`{"type":"text","content":"Half a"}`,
				`{"type":"retry","attempt":1,"delay_ms":1,"reason":"stream: stream ended without response.completed"}`,
			}, successLines...),
			wantRequests: 2,
		},
		{
			name: "nested error event is not retried",
			give: []transporttest.Response{{Body: fixture(t, "error_event_nested")}, success},
			want: []string{
				`{"type":"error","kind":"request","message":"Your input exceeds the context window of this model."}`,
			},
			wantRequests: 1,
		},
		{
			name: "401 is not retried",
			give: []transporttest.Response{{
				Status: 401, Header: map[string]string{"Content-Type": "application/json"},
				Body: []byte(`{"error":{"message":"Incorrect API key provided: sk-****.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			}, success},
			want: []string{
				`{"type":"error","kind":"auth","message":"HTTP 401: Incorrect API key provided: sk-****."}`,
			},
			wantRequests: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := transporttest.NewServer(t, tt.give...)
			client := transport.NewClient(responses.New(responses.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-secret-key"}),
				transport.Options{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond,
					Jitter: func() float64 { return 0 }})
			t.Cleanup(client.CloseIdleConnections)

			var got []string
			for m := range client.Stream(context.Background(), protocol.Request{Model: "gpt-5.4",
				Messages: []protocol.Turn{protocol.UserText("hi")}}) {
				got = append(got, transporttest.EventLine(t, m))
			}

			transporttest.AssertEventLines(t, tt.want, got)
			received := srv.Received()
			assert.Len(t, received, tt.wantRequests)
			for _, r := range received {
				assert.Equal(t, "Bearer sk-secret-key", r.Header.Get("Authorization"))
				assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
				assert.Contains(t, string(r.Body), `"stream":true`)
			}
			for _, line := range got {
				assert.NotContains(t, line, "sk-secret-key")
			}
		})
	}
}

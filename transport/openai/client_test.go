package openai_test

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
	"github.com/agentrun/agentrun/transport/openai"
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
	success := transporttest.Response{Body: fixture(t, "usage_never_sent")}
	successLines := []string{
		`{"type":"text","content":"Done."}`,
		`{"type":"usage","input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"kind":"agent"}`,
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
				Status: 429, Header: map[string]string{"Content-Type": "application/json", "Retry-After-Ms": "3"},
				Body: []byte(`{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`),
			}, success},
			want: append([]string{
				`{"type":"retry","attempt":1,"delay_ms":3,"reason":"http_429: HTTP 429: Rate limit reached for requests"}`,
			}, successLines...),
			wantRequests: 2,
		},
		{
			name: "mid-stream error chunk then success",
			give: []transporttest.Response{{Body: fixture(t, "openai_midstream_server_error")}, success},
			want: append([]string{
				`{"type":"text","content":"Looking at"}`,
				`{"type":"retry","attempt":1,"delay_ms":1,"reason":"server: The server had an error while processing your request. Sorry about that!"}`,
			}, successLines...),
			wantRequests: 2,
		},
		{
			name: "EOF without DONE then success",
			give: []transporttest.Response{{Body: fixture(t, "eof_without_done")}, success},
			want: append([]string{
				`{"type":"text","content":"Half an"}`,
				`{"type":"retry","attempt":1,"delay_ms":1,"reason":"stream: stream ended without [DONE]"}`,
			}, successLines...),
			wantRequests: 2,
		},
		{
			name: "cut connection then success",
			give: []transporttest.Response{{Body: fixture(t, "openai_text_length")[:400], Cut: true}, success},
			want: append([]string{
				`{"type":"retry","attempt":1,"delay_ms":1,"reason":"network: read stream: unexpected EOF"}`,
			}, successLines...),
			wantRequests: 2,
		},
		{
			name: "400 is not retried",
			give: []transporttest.Response{{
				Status: 400, Header: map[string]string{"Content-Type": "application/json"},
				Body: []byte(`{"error":{"message":"Unsupported parameter: 'max_tokens'","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`),
			}, success},
			want: []string{
				`{"type":"error","kind":"request","message":"HTTP 400: Unsupported parameter: 'max_tokens'"}`,
			},
			wantRequests: 1,
		},
		{
			name: "mid-stream request error is not retried",
			give: []transporttest.Response{{Body: fixture(t, "vllm_nested_error_int_code")}, success},
			want: []string{
				`{"type":"text","content":"The file"}`,
				`{"type":"error","kind":"request","message":"This model's maximum context length is 8192 tokens. However, you requested 8210 tokens."}`,
			},
			wantRequests: 1,
		},
		{
			name: "error body with status 200 then success",
			give: []transporttest.Response{{Body: fixture(t, "error_body_200_framed")}, success},
			want: append([]string{
				`{"type":"retry","attempt":1,"delay_ms":1,"reason":"server: litellm.APIConnectionError: Ollama_chatException - model 'llama9' not found"}`,
			}, successLines...),
			wantRequests: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := transporttest.NewServer(t, tt.give...)
			client := transport.NewClient(openai.New(openai.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-secret-key"}),
				transport.Options{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond,
					Jitter: func() float64 { return 0 }})
			t.Cleanup(client.CloseIdleConnections)

			var got []string
			for m := range client.Stream(context.Background(), protocol.Request{Model: "gpt-4.1-mini",
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

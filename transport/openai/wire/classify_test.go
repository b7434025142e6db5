package wire_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/openai/wire"
)

// TestTransportError is the one table of how the OpenAI family's errors are
// classified, for both APIs: Chat Completions error bodies, error chunks and error
// events, and Responses error bodies, error events and response.failed events. A
// body is read as the decoders read it (ParseErrorOrDetail); an object, the error
// member of an event or the event itself, is read as an ErrorObject.
func TestTransportError(t *testing.T) {
	tests := map[string]struct {
		body     string // an error body or error chunk
		object   string // an error object: an error event, or response.failed's response.error
		fallback string
		wantKind protocol.ErrorKind
		wantMsg  string
	}{
		// Chat Completions.
		"chat: the code is more specific than the type": {
			body:     `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			wantKind: protocol.ErrAuth, wantMsg: "Incorrect API key provided.",
		},
		"chat: context length, type and code agree": {
			body:     `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			wantKind: protocol.ErrRequest, wantMsg: "This model's maximum context length is 128000 tokens.",
		},
		"chat: rate limit with a type of requests": {
			body:     `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			wantKind: protocol.ErrRateLimit, wantMsg: "Rate limit reached for requests",
		},
		"chat: quota is not waited out": {
			body:     `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			wantKind: protocol.ErrAuth, wantMsg: "You exceeded your current quota.",
		},
		"chat: mid-stream server error, type only": {
			body:     `{"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error"}}`,
			wantKind: protocol.ErrServer, wantMsg: "The server had an error while processing your request. Sorry about that!",
		},
		"chat: a new code falls back to the type": {
			body:     `{"error":{"message":"overloaded right now","type":"overloaded_error","code":"some_future_code"}}`,
			wantKind: protocol.ErrOverloaded, wantMsg: "overloaded right now",
		},
		"chat: plain string error": {
			body:     `{"error": "Input validation error: inputs tokens + max_new_tokens must be <= 4096"}`,
			wantKind: protocol.ErrServer, wantMsg: "Input validation error: inputs tokens + max_new_tokens must be <= 4096",
		},
		"chat: vllm nested, the integer code is the status": {
			body:     `{"error":{"message":"maximum context length is 8192 tokens","type":"BadRequestError","param":null,"code":400}}`,
			wantKind: protocol.ErrRequest, wantMsg: "maximum context length is 8192 tokens",
		},
		"chat: vllm nested, a string code": {
			body:     `{"error":{"message":"maximum context length is 8192 tokens","type":"BadRequestError","param":null,"code":"context_length_exceeded"}}`,
			wantKind: protocol.ErrRequest, wantMsg: "maximum context length is 8192 tokens",
		},
		"chat: vllm flat": {
			body:     `{"object":"error","message":"The model does not exist.","type":"NotFoundError","param":null,"code":404}`,
			wantKind: protocol.ErrRequest, wantMsg: "The model does not exist.",
		},
		"chat: the status wins over the words": {
			body:     `{"object":"error","message":"try later","type":"invalid_request_error","code":503}`,
			wantKind: protocol.ErrServer, wantMsg: "try later",
		},
		"chat: openrouter error chunk": {
			body:     `{"id":"gen-1","object":"chat.completion.chunk","error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`,
			wantKind: protocol.ErrServer, wantMsg: "Provider disconnected",
		},
		"chat: litellm status as a string": {
			body:     `{"error":{"message":"model 'llama9' not found","type":null,"param":null,"code":"500"}}`,
			wantKind: protocol.ErrServer, wantMsg: "model 'llama9' not found",
		},
		"chat: ollama pre-stream not found": {
			body:     `{"error":{"message":"model \"qwen9\" not found, try pulling it first","type":"not_found_error","param":null,"code":null}}`,
			wantKind: protocol.ErrRequest, wantMsg: `model "qwen9" not found, try pulling it first`,
		},
		"chat: ollama pre-stream api error": {
			body:     `{"error":{"message":"unexpected server status","type":"api_error","param":null,"code":null}}`,
			wantKind: protocol.ErrServer, wantMsg: "unexpected server status",
		},
		"chat: fastapi detail": {
			body:     `{"detail":"Internal Server Error"}`,
			wantKind: protocol.ErrServer, wantMsg: "Internal Server Error",
		},
		"chat: error event object": {
			object:   `{"message":"upstream overloaded","type":"overloaded_error"}`,
			wantKind: protocol.ErrOverloaded, wantMsg: "upstream overloaded",
		},
		"chat: no message names the words once": {
			body:     `{"error":{"type":"insufficient_quota","code":"insufficient_quota"}}`,
			fallback: "error chunk", wantKind: protocol.ErrAuth, wantMsg: "error chunk: insufficient_quota",
		},
		"chat: nothing at all": {
			body:     `{"error":{"message":null,"code":null}}`,
			fallback: "error chunk", wantKind: protocol.ErrServer, wantMsg: "error chunk",
		},
		"chat: unknown words": {
			body:     `{"error":{"message":"odd","type":"weird_error","code":"strange"}}`,
			wantKind: protocol.ErrServer, wantMsg: "odd",
		},

		// Responses.
		"responses: error body on a 200": {
			body:     `{"error":{"message":"Incorrect API key provided: sk-****.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			wantKind: protocol.ErrAuth, wantMsg: "Incorrect API key provided: sk-****.",
		},
		"responses: error event, code only": {
			object:   `{"type":"error","sequence_number":2,"code":"invalid_prompt","message":"Invalid prompt: your prompt was flagged.","param":null}`,
			wantKind: protocol.ErrRequest, wantMsg: "Invalid prompt: your prompt was flagged.",
		},
		"responses: nested error event": {
			object:   `{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":"input"}`,
			wantKind: protocol.ErrRequest, wantMsg: "Your input exceeds the context window of this model.",
		},
		"responses: nested error event, the code wins": {
			object:   `{"type":"invalid_request_error","code":"rate_limit_exceeded","message":"Slow down."}`,
			wantKind: protocol.ErrRateLimit, wantMsg: "Slow down.",
		},
		"responses: response.failed server error": {
			object:   `{"code":"server_error","message":"The model failed to generate a response."}`,
			wantKind: protocol.ErrServer, wantMsg: "The model failed to generate a response.",
		},
		"responses: response.failed rate limit": {
			object:   `{"code":"rate_limit_exceeded","message":"Rate limit reached for gpt-5.4 on tokens per min."}`,
			wantKind: protocol.ErrRateLimit, wantMsg: "Rate limit reached for gpt-5.4 on tokens per min.",
		},
		"responses: response.failed without a message": {
			object:   `{"code":"server_error"}`,
			fallback: "response failed", wantKind: protocol.ErrServer, wantMsg: "response failed: server_error",
		},
		"responses: response.failed without an error": {
			object:   `{}`,
			fallback: "response failed", wantKind: protocol.ErrServer, wantMsg: "response failed",
		},
		"responses: error event, type and code without a message": {
			object:   `{"type":"invalid_request_error","code":"invalid_prompt"}`,
			fallback: "error event", wantKind: protocol.ErrRequest, wantMsg: "error event: invalid_request_error invalid_prompt",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var e wire.APIError
			if tt.body != "" {
				var ok bool
				e, ok = wire.ParseErrorOrDetail([]byte(tt.body))
				require.True(t, ok, "the body has an error shape")
			} else {
				var o wire.ErrorObject
				require.NoError(t, json.Unmarshal([]byte(tt.object), &o))
				e = o.APIError()
			}
			got := e.TransportError(tt.fallback)
			assert.Equal(t, tt.wantKind, got.Kind)
			assert.Equal(t, tt.wantMsg, got.Message)
			assert.Zero(t, got.Status, "a classified body is not an HTTP status error")
		})
	}
}

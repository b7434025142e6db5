package openai_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/openai"
	"github.com/agentrun/agentrun/transport/transporttest"
)

// cacheKey returns the prompt_cache_key of a request body, "" when it has none.
func cacheKey(t *testing.T, body []byte) string {
	t.Helper()
	var r struct {
		Key string `json:"prompt_cache_key"`
	}
	require.NoError(t, json.Unmarshal(body, &r))
	return r.Key
}

// TestPromptCacheKey checks that requests sharing a system prompt and tools carry one
// prompt_cache_key, that another prefix has another, and that a request with neither
// has none.
func TestPromptCacheKey(t *testing.T) {
	srv := transporttest.NewServer(t, transporttest.Response{Body: fixture(t, "usage_never_sent")})
	d := openai.New(openai.Config{BaseURL: srv.URL + "/v1"})
	client := transport.NewClient(d, transport.Options{})
	t.Cleanup(client.CloseIdleConnections)
	tools := []protocol.ToolSpec{{Name: "Read", Description: "reads", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	for _, req := range []protocol.Request{
		{Model: "m", System: "be brief", Tools: tools, Messages: []protocol.Turn{protocol.UserText("one")}},
		{Model: "m", System: "be brief", Tools: tools, Messages: []protocol.Turn{protocol.UserText("two")}},
		{Model: "m", System: "be long", Tools: tools, Messages: []protocol.Turn{protocol.UserText("one")}},
		{Model: "m", Messages: []protocol.Turn{protocol.UserText("one")}},
	} {
		for range client.Stream(context.Background(), req) {
		}
	}
	got := srv.Received()
	require.Len(t, got, 4)
	first := cacheKey(t, got[0].Body)
	assert.Regexp(t, `^agentrun-[0-9a-f]{32}$`, first)
	assert.Equal(t, first, cacheKey(t, got[1].Body), "the same prefix, the same key")
	assert.NotEqual(t, first, cacheKey(t, got[2].Body), "another system prompt, another key")
	assert.Empty(t, cacheKey(t, got[3].Body), "no system prompt and no tools: no key")
}

// TestPromptCacheKeyRefused has a server refuse prompt_cache_key: the request is sent
// once more without it, a retry event says so, and the dialect never sends it again.
func TestPromptCacheKeyRefused(t *testing.T) {
	refused := transporttest.Response{Status: 400, Header: map[string]string{"Content-Type": "application/json"},
		Body: []byte(`{"error":{"message":"Unrecognized request argument supplied: prompt_cache_key","type":"invalid_request_error"}}`)}
	srv := transporttest.NewServer(t, refused, transporttest.Response{Body: fixture(t, "usage_never_sent")})
	d := openai.New(openai.Config{BaseURL: srv.URL + "/v1"})
	client := transport.NewClient(d, transport.Options{MaxAttempts: 3, BaseDelay: time.Millisecond})
	t.Cleanup(client.CloseIdleConnections)
	req := protocol.Request{Model: "m", System: "be brief", Messages: []protocol.Turn{protocol.UserText("hi")}}
	var retries []protocol.Message
	for m := range client.Stream(context.Background(), req) {
		if m.Kind == protocol.KindRetry {
			retries = append(retries, m)
		}
	}
	for range client.Stream(context.Background(), req) {
	}
	got := srv.Received()
	require.Len(t, got, 3)
	assert.NotEmpty(t, cacheKey(t, got[0].Body))
	assert.Empty(t, cacheKey(t, got[1].Body), "sent again without the key")
	assert.Empty(t, cacheKey(t, got[2].Body), "and never again")
	require.Len(t, retries, 1)
	assert.Contains(t, retries[0].Reason, "prompt_cache_key")
}

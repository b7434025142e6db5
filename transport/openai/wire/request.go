package wire

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// SetHeaders sets the headers of a streaming JSON request: Content-Type, Accept,
// "Authorization: Bearer <apiKey>" when apiKey is not empty (so keyless local servers
// work), then every header of extra.
func SetHeaders(h http.Header, apiKey string, extra map[string]string) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
	for k, v := range extra {
		h.Set(k, v)
	}
}

// PromptCacheKey is the prompt_cache_key of requests whose prefix (system prompt and
// tools) has the digest prefix, "" for none: OpenAI routes requests with one key to the
// same cache, so the sessions of a batch that share a prefix read what the first wrote.
func PromptCacheKey(prefix string) string {
	if len(prefix) < 32 {
		return ""
	}
	return "agentrun-" + prefix[:32]
}

// emptySchema is the parameters of a tool that declares no input schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Parameters returns a tool's input schema as function parameters: the schema itself,
// or an object schema without properties when the tool declares none.
func Parameters(schema json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(schema)) == 0 {
		return emptySchema
	}
	return schema
}

// Arguments returns a tool input as the JSON string of a function call's arguments;
// no input (empty or null) is "{}".
func Arguments(input json.RawMessage) string {
	in := bytes.TrimSpace(input)
	if len(in) == 0 || bytes.Equal(in, []byte("null")) {
		return "{}"
	}
	return string(in)
}

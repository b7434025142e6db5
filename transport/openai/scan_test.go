package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/fuzzguard"
	"github.com/agentrun/agentrun/transport/jsonscan"
)

// reused is a chunk as parseChunk leaves it for the next one: its choices' array kept,
// with a tool call in it, so that a test reads into reused memory as the decoder does.
func reused(t testing.TB) (*jsonscan.Scanner, *chunk) {
	var s jsonscan.Scanner
	var c chunk
	prev := `{"choices":[{"index":0,"delta":{"content":"x","tool_calls":[{"index":3,"id":"old","function":{"name":"n","arguments":"{}"}}]}}]}`
	if !fastChunk(&s, []byte(prev), &c) {
		t.Fatal("the previous chunk does not take the fast path")
	}
	c = chunk{Choices: c.Choices[:0]}
	return &s, &c
}

// sameChunk compares two chunks, an empty choices slice and a missing one alike.
func sameChunk(a, b chunk) bool {
	if len(a.Choices) == 0 && len(b.Choices) == 0 {
		a.Choices, b.Choices = nil, nil
	}
	return assert.ObjectsAreEqual(a, b)
}

func TestFastChunk(t *testing.T) {
	tests := map[string]struct {
		give   string
		wantOK bool
	}{
		"text":                    {give: `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4.1","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"hi"},"logprobs":null,"finish_reason":null}],"usage":null}`, wantOK: true},
		"tool call":               {give: `{"choices":[{"index":0,"delta":{"content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":"{\"c"}}]}}]}`, wantOK: true},
		"arguments as an object":  {give: `{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":{"a":1}}}]}}]}`, wantOK: true},
		"legacy function call":    {give: `{"choices":[{"delta":{"function_call":{"name":"f","arguments":"{}"}}}]}`, wantOK: true},
		"usage":                   {give: `{"choices":[],"usage":{"prompt_tokens":486,"completion_tokens":52,"total_tokens":538,"prompt_tokens_details":{"cached_tokens":384,"audio_tokens":0}}}`, wantOK: true},
		"deepseek cache":          {give: `{"choices":[],"usage":{"prompt_tokens":10,"prompt_cache_hit_tokens":8,"prompt_cache_miss_tokens":2}}`, wantOK: true},
		"reasoning":               {give: `{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"hmm","reasoning":null}}],"timings":{"predicted_ms":1.5}}`, wantOK: true},
		"error object":            {give: `{"error":{"message":"overloaded","code":503}}`, wantOK: true},
		"error string":            {give: `{"object":"error","error":"model is loading"}`, wantOK: true},
		"unicode escapes":         {give: `{"choices":[{"index":0,"delta":{"content":"caf\u00e9 \ud83c\udf89"}}]}`, wantOK: true},
		"repeated choices merge":  {give: `{"choices":[{"index":1,"delta":{"content":"a"}}],"choices":[{"delta":{"refusal":"b"}}]}`, wantOK: true},
		"two choices":             {give: `{"choices":[{"index":1,"delta":{"content":"a"}},{"index":0,"delta":{"content":"b"}}]}`, wantOK: true},
		"nulls":                   {give: `{"object":null,"choices":null,"usage":null,"error":null}`, wantOK: true},
		"content of another type": {give: `{"choices":[{"index":0,"delta":{"content":5}}]}`},
		"index as a string":       {give: `{"choices":[{"index":"0","delta":{"content":"a"}}]}`},
		"key in another case":     {give: `{"Choices":[]}`},
		"invalid JSON":            {give: `{"choices":[{"index":0,}]}`},
		"trailing garbage":        {give: `{"choices":[]} x`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s, fast := reused(t)
			ok := fastChunk(s, []byte(tt.give), fast)
			assert.Equal(t, tt.wantOK, ok)
			if ok {
				var slow chunk
				require.NoError(t, json.Unmarshal([]byte(tt.give), &slow))
				assert.True(t, sameChunk(slow, *fast), "fast path %+v, encoding/json %+v", *fast, slow)
			}
		})
	}
}

// FuzzParseChunk checks the fast path against encoding/json: whatever it accepts,
// encoding/json accepts too, with the same result.
func FuzzParseChunk(f *testing.F) {
	fixtures, err := filepath.Glob(filepath.Join("testdata", "TestDecode", "*.sse"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range fixtures {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), []byte("\n")) {
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				f.Add(bytes.TrimSpace(data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzguard.Run(len(in), func() {
			s, fast := reused(t)
			if !fastChunk(s, in, fast) {
				return
			}
			var slow chunk
			if err := json.Unmarshal(in, &slow); err != nil {
				t.Fatalf("fast path accepted %q, encoding/json says %v", in, err)
			}
			if !sameChunk(slow, *fast) {
				t.Fatalf("input %q: fast path %+v, encoding/json %+v", in, *fast, slow)
			}
		})
	})
}

package responses

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

func TestFastEvent(t *testing.T) {
	tests := map[string]struct {
		give   string
		wantOK bool
	}{
		"text delta":            {give: `{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"token","logprobs":[],"obfuscation":"x1"}`, wantOK: true},
		"arguments delta":       {give: `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{\"a\""}`, wantOK: true},
		"arguments done":        {give: `{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"name":"Bash","arguments":"{}"}`, wantOK: true},
		"function item":         {give: `{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"write_file"}}`, wantOK: true},
		"message item":          {give: `{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","content":[{"type":"output_text","text":"hi","annotations":[]}]}}`, wantOK: true},
		"summary part":          {give: `{"type":"response.reasoning_summary_part.added","summary_index":2,"part":{"type":"summary_text","text":""}}`, wantOK: true},
		"completed":             {give: `{"type":"response.completed","response":{"id":"r","status":"completed","output":[{"type":"message"}],"max_output_tokens":100,"usage":{"input_tokens":486,"input_tokens_details":{"cached_tokens":384},"output_tokens":52,"total_tokens":538}}}`, wantOK: true},
		"incomplete":            {give: `{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":1,"cached_tokens":1}}}`, wantOK: true},
		"failed":                {give: `{"type":"response.failed","response":{"error":{"code":"rate_limit_exceeded","message":"slow down"}}}`, wantOK: true},
		"flat error":            {give: `{"type":"error","code":"invalid_prompt","message":"flagged","param":null}`, wantOK: true},
		"nested error":          {give: `{"type":"error","error":{"type":"server_error","code":503,"message":null}}`, wantOK: true},
		"unknown event":         {give: `{"type":"response.future_thing","payload":{"delta":[1,2,3]}}`, wantOK: true},
		"nulls":                 {give: `{"type":"response.output_text.delta","output_index":null,"item":null,"response":null,"arguments":null,"delta":null}`, wantOK: true},
		"repeated item":         {give: `{"item":{"id":"a"},"item":{"name":"n"}}`, wantOK: true},
		"unicode escapes":       {give: `{"type":"response.output_text.delta","delta":"caf\u00e9"}`, wantOK: true},
		"delta of another type": {give: `{"type":"response.future_thing","delta":[1,2,3]}`},
		"index as a string":     {give: `{"type":"response.output_text.delta","output_index":"0"}`},
		"key in another case":   {give: `{"Type":"error"}`},
		"invalid JSON":          {give: `{"type":"response.output_text.delta",}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var s jsonscan.Scanner
			var fast event
			ok := fastEvent(&s, []byte(tt.give), &fast, &spare{itemID: "msg_1"})
			assert.Equal(t, tt.wantOK, ok)
			if ok {
				var slow event
				require.NoError(t, json.Unmarshal([]byte(tt.give), &slow))
				assert.Equal(t, slow, fast)
			}
		})
	}
}

// FuzzParseEvent checks the fast path against encoding/json: whatever it accepts,
// encoding/json accepts too, with the same result.
func FuzzParseEvent(f *testing.F) {
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
			var s jsonscan.Scanner
			var fast event
			if !fastEvent(&s, in, &fast, &spare{itemID: "msg_1"}) {
				return
			}
			var slow event
			if err := json.Unmarshal(in, &slow); err != nil {
				t.Fatalf("fast path accepted %q, encoding/json says %v", in, err)
			}
			if !assert.ObjectsAreEqual(slow, fast) {
				t.Fatalf("input %q: fast path %+v, encoding/json %+v", in, fast, slow)
			}
		})
	})
}

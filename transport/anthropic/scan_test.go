package anthropic

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
		"text delta":                  {give: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`, wantOK: true},
		"spaces and trailing":         {give: " { \"type\" : \"ping\" }\t\r\n ", wantOK: true},
		"simple escapes":              {give: `{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":"a\"b\\c\/d\n\t\r\b\f"}}`, wantOK: true},
		"multibyte":                   {give: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Grüße 世界 🎉"}}`, wantOK: true},
		"partial json":                {give: `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}`, wantOK: true},
		"stop":                        {give: `{"type":"content_block_stop","index":3}`, wantOK: true},
		"empty object":                {give: `{}`, wantOK: true},
		"unicode escape":              {give: `{"type":"x","delta":{"text":"caf\u00e9"}}`, wantOK: true},
		"invalid UTF-8":               {give: "{\"type\":\"x\",\"delta\":{\"text\":\"\xff\"}}", wantOK: true},
		"unknown members":             {give: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","citation":{"n":[1,2]}},"future":null}`, wantOK: true},
		"message start":               {give: `{"type":"message_start","message":{"id":"m","model":"c","content":[],"usage":{"input_tokens":5,"cache_read_input_tokens":null,"output_tokens":1,"service_tier":"standard"}}}`, wantOK: true},
		"block start":                 {give: `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{"a":[1]}}}`, wantOK: true},
		"message delta":               {give: `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}`, wantOK: true},
		"null stop reason":            {give: `{"type":"message_delta","delta":{"stop_reason":null}}`, wantOK: true},
		"repeated delta merges":       {give: `{"delta":{"text":"a"},"delta":{"type":"text_delta"}}`, wantOK: true},
		"repeated usage merges":       {give: `{"usage":{"input_tokens":1},"usage":{"output_tokens":2}}`, wantOK: true},
		"negative index":              {give: `{"index":-1}`, wantOK: true},
		"error event":                 {give: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		"control character":           {give: "{\"type\":\"x\\u0001\",\"delta\":{\"text\":\"a\x01\"}}"},
		"key in another case":         {give: `{"Type":"ping"}`},
		"unknown key in another case": {give: `{"type":"ping","Future":1}`},
		"escaped key":                 {give: `{"typ\u0065":"ping"}`},
		"leading zero":                {give: `{"index":01}`},
		"fractional index":            {give: `{"index":1.5}`},
		"huge index":                  {give: `{"index":12345678901234567890}`},
		"null":                        {give: `{"type":null,"index":null,"usage":null,"delta":null}`, wantOK: true},
		"index of another type":       {give: `{"index":"1"}`},
		"trailing garbage":            {give: `{"type":"ping"}x`},
		"two values":                  {give: `{"type":"ping"}{}`},
		"unterminated":                {give: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"oops}`},
		"trailing comma":              {give: `{"type":"ping",}`},
		"lone backslash at end":       {give: `{"type":"a\`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var fast wireEvent
			var s jsonscan.Scanner
			ok := fastEvent(&s, []byte(tt.give), &fast)
			assert.Equal(t, tt.wantOK, ok)
			if ok {
				var slow wireEvent
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
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzguard.Run(len(in), func() {
			var fast wireEvent
			var s jsonscan.Scanner
			if !fastEvent(&s, in, &fast) {
				return
			}
			var slow wireEvent
			if err := json.Unmarshal(in, &slow); err != nil {
				t.Fatalf("fast path accepted %q, encoding/json says %v", in, err)
			}
			if !assert.ObjectsAreEqual(slow, fast) {
				t.Fatalf("input %q: fast path %+v, encoding/json %+v", in, fast, slow)
			}
		})
	})
}

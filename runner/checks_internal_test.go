package runner

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/agentrun/agentrun/fuzzguard"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExtractJSON(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give    string
		want    string
		wantErr bool
	}{
		"whole text":             {give: ` {"answer": 42} `, want: `{"answer":42}`},
		"fenced block":           {give: "Here:\n```json\n{\"a\": 1}\n```\nDone.", want: `{"a":1}`},
		"fence without language": {give: "```\n[1, 2]\n```", want: `[1,2]`},
		"last fenced block":      {give: "```json\n{\"first\": 1}\n```\nthen\n```json\n{\"second\": 2}\n```", want: `{"second":2}`},
		"embedded in prose":      {give: `The answer is {"a": [1, {"b": null}]} as asked.`, want: `{"a":[1,{"b":null}]}`},
		"a bare number":          {give: "42", want: `42`},
		"prose only":             {give: "forty-two", wantErr: true},
		"unbalanced":             {give: `{"a": [1, 2}`, wantErr: true},
		"empty":                  {give: "", wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			doc, raw, err := extractJSON(tt.give)
			if tt.wantErr {
				assert.Error(t, err)
				assert.Nil(t, doc)
				assert.Nil(t, raw)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(raw))
		})
	}
}

// FuzzExtractJSON checks that extractJSON never panics and that whatever it returns is
// one compact, valid JSON value, found again when extracted from itself.
func FuzzExtractJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		fuzzguard.Run(len(text), func() {
			doc, raw, err := extractJSON(text)
			if err != nil {
				if doc != nil || raw != nil {
					t.Fatalf("an error with a value: %v %q", doc, raw)
				}
				return
			}
			if !json.Valid(raw) {
				t.Fatalf("invalid JSON %q from %q", raw, text)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, raw); err != nil || !bytes.Equal(compact.Bytes(), raw) {
				t.Fatalf("not compact: %q", raw)
			}
			_, again, err := extractJSON(string(raw))
			if err != nil || !bytes.Equal(again, raw) {
				t.Fatalf("extracting %q again gave %q, %v", raw, again, err)
			}
		})
	})
}

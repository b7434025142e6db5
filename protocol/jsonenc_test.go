package protocol_test

import (
	"bytes"
	"encoding/json"
	"github.com/agentrun/agentrun/fuzzguard"
	"testing"

	"github.com/agentrun/agentrun/protocol"
)

// FuzzAppendJSONString checks AppendJSONString against encoding/json with HTML
// escaping off, byte for byte, and that it appends to what dst holds.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a&b>", "quote\" back\\slash", "\n\r\t\b\f\x00\x1f", "é€😀", "\u2028\u2029", "\xff\xfe bad", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzguard.Run(len(s), func() {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			if got := string(protocol.AppendJSONString(nil, s)); got+"\n" != want.String() {
				t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got, want.String())
			}
			if got := string(protocol.AppendJSONString([]byte("x:"), s)); got+"\n" != "x:"+want.String() {
				t.Fatalf("AppendJSONString(x:, %q) = %s, want x:%s", s, got, want.String())
			}
		})
	})
}

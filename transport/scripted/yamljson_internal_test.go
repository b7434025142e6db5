package scripted

import (
	"bytes"
	"encoding/json"
	"testing"
)

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a&b>", "quote\" back\\slash", "\n\r\t\b\f\x00\x1f", "é€😀", "\u2028\u2029", "\xff\xfe bad", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := string(appendString(nil, s)); got+"\n" != want.String() {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want.String())
		}
	})
}

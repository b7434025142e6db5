package textcut_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/textcut"
)

// "é" is 2 bytes, "€" 3 and "😀" 4.
func TestHead(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"fits", "abc", 3, "abc"},
		{"fits with room", "abc", 10, "abc"},
		{"ascii", "abcdef", 4, "abcd"},
		{"zero", "abc", 0, ""},
		{"negative", "abc", -1, ""},
		{"empty", "", 5, ""},
		{"two-byte at the boundary", "aé", 2, "a"},
		{"two-byte before the boundary", "aéb", 3, "aé"},
		{"three-byte after one byte", "a€", 2, "a"},
		{"three-byte after two bytes", "a€", 3, "a"},
		{"three-byte whole", "a€b", 4, "a€"},
		{"four-byte after one byte", "😀x", 1, ""},
		{"four-byte after three bytes", "😀x", 3, ""},
		{"four-byte whole", "😀x", 4, "😀"},
		{"stray continuation bytes stay", "a\x80\x80\x80\x80b", 3, "a\x80\x80"},
		{"a lone lead byte is one byte", "a\xe2b", 2, "a\xe2"},
		{"a cut sequence is one byte each", "a\xe2\x82b", 3, "a\xe2\x82"},
		{"replacement character whole", "a\uFFFDb", 3, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, textcut.Head(tt.s, tt.n))
			assert.Equal(t, len(tt.want), textcut.HeadLen(tt.s, tt.n))
		})
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"fits", "abc", 3, "abc"},
		{"ascii", "abcdef", 2, "ef"},
		{"zero", "abc", 0, ""},
		{"negative", "abc", -3, ""},
		{"two-byte at the boundary", "éa", 2, "a"},
		{"two-byte whole", "aéb", 3, "éb"},
		{"three-byte cut after its first byte", "€a", 3, "a"},
		{"three-byte cut after its second byte", "€a", 2, "a"},
		{"four-byte whole", "x😀", 4, "😀"},
		{"four-byte cut", "x😀", 3, ""},
		{"stray continuation bytes stay", "a\x80\x80b", 2, "\x80b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, textcut.Tail(tt.s, tt.n))
			assert.Equal(t, len(tt.s)-len(tt.want), textcut.TailStart(tt.s, tt.n))
		})
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		mark string
		want string
	}{
		{"fits", "abcdef", 6, "…", "abcdef"},
		{"the mark counts", "abcdefg", 6, "…", "abc…"},
		{"dots", "abcdefg", 6, "...", "abc..."},
		{"no room for the mark", "abcdefg", 2, "…", "ab"},
		{"multibyte at the boundary", "aéééé", 6, "…", "aé…"},
		{"no mark", "a€b", 3, "", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := textcut.Clip(tt.s, tt.n, tt.mark)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, len(got), tt.n)
		})
	}
}

func TestClipTail(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		mark string
		want string
	}{
		{"fits", "abcdef", 6, "…", "abcdef"},
		{"the mark counts", "abcdefg", 6, "…", "…efg"},
		{"multibyte at the boundary", "éééa", 5, "…", "…a"},
		{"no room for the mark", "abcdefg", 2, "…", "fg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := textcut.ClipTail(tt.s, tt.n, tt.mark)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, len(got), tt.n)
		})
	}
}

func TestClipRunes(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		mark string
		want string
	}{
		{"fits", "ééé", 3, "…", "ééé"},
		{"the mark counts", "éééé", 3, "…", "éé…"},
		{"dots", "😀😀😀😀😀", 4, "...", "😀..."},
		{"no room for the mark", "éééé", 2, "...", "éé"},
		{"zero", "é", 0, "…", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := textcut.ClipRunes(tt.s, tt.n, tt.mark)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, utf8.RuneCountInString(got), tt.n)
		})
	}
}

// FuzzCut checks what every cut promises, for any text and budget: a head is a prefix
// and a tail a suffix of s, each at most n bytes, neither splitting a character (so
// they are valid UTF-8 when s is), each giving up at most the 3 bytes of a split
// character; and clips stay within n.
func FuzzCut(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= len(s) + 8
		head, tail := textcut.Head(s, n), textcut.Tail(s, n)
		want := min(max(n, 0), len(s))
		for _, c := range []struct {
			name string
			cut  string
			ok   bool
		}{{"head", head, strings.HasPrefix(s, head)}, {"tail", tail, strings.HasSuffix(s, tail)}} {
			if !c.ok {
				t.Fatalf("%s %q of %q (n %d) is not part of it", c.name, c.cut, s, n)
			}
			if len(c.cut) > want || len(c.cut) < want-(utf8.UTFMax-1) {
				t.Fatalf("%s %q of %q is %d bytes for n %d", c.name, c.cut, s, len(c.cut), n)
			}
			if utf8.ValidString(s) && !utf8.ValidString(c.cut) {
				t.Fatalf("%s %q of valid %q (n %d) is not valid UTF-8", c.name, c.cut, s, n)
			}
		}
		if utf8.ValidString(s) && !utf8.ValidString(s[len(head):]) {
			t.Fatalf("the rest of %q after head %q is not valid UTF-8", s, head)
		}
		for _, mark := range []string{"", textcut.Ellipsis, "..."} {
			if got := textcut.Clip(s, n, mark); len(got) > max(n, 0) && got != s {
				t.Fatalf("Clip(%q, %d, %q) = %q is over the budget", s, n, mark, got)
			}
			if got := textcut.ClipTail(s, n, mark); len(got) > max(n, 0) && got != s {
				t.Fatalf("ClipTail(%q, %d, %q) = %q is over the budget", s, n, mark, got)
			}
			if got := textcut.ClipRunes(s, n, mark); utf8.RuneCountInString(got) > max(n, 0) && got != s {
				t.Fatalf("ClipRunes(%q, %d, %q) = %q is over the budget", s, n, mark, got)
			}
		}
	})
}

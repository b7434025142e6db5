package tools

import (
	"testing"
	"unicode/utf8"

	"github.com/agentrun/agentrun/fuzzguard"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/.

func FuzzGitignore(f *testing.F) {
	f.Fuzz(func(t *testing.T, rules, path string, isDir bool) {
		fuzzguard.Run(len(rules)+len(path), func() {
			file := ignoreFile{rules: parseIgnore(rules)}
			file.match(path, isDir)
		})
	})
}

func FuzzTruncate(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string, max int) {
		fuzzguard.Run(len(s), func() {
			got := Truncate(s, max)
			if max <= 0 || len(s) <= max {
				if got != s {
					t.Fatalf("changed text that fits")
				}
				return
			}
			if len(got) > max {
				t.Fatalf("len %d > max %d", len(got), max)
			}
			if utf8.ValidString(s) && !utf8.ValidString(got) {
				t.Fatalf("split a character: %q", got)
			}
		})
	})
}

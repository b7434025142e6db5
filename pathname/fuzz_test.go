package pathname

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentrun/agentrun/fuzzguard"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/.

func FuzzGlob(f *testing.F) {
	f.Fuzz(func(t *testing.T, pattern, path string) {
		fuzzguard.Run(len(pattern)+len(path), func() {
			g, err := Compile(pattern)
			if err != nil {
				return
			}
			g.Match(path)
			if !strings.ContainsAny(pattern, `*?[{\`) && pattern != "" && !strings.Contains(pattern, "//") &&
				!strings.HasPrefix(pattern, "/") && !strings.HasSuffix(pattern, "/") && utf8.ValidString(pattern) {
				if !g.Match(pattern) {
					t.Fatalf("literal pattern %q does not match itself", pattern)
				}
			}
		})
	})
}

func FuzzCompileSegment(f *testing.F) {
	f.Fuzz(func(t *testing.T, pattern, name string) {
		fuzzguard.Run(len(pattern)+len(name), func() {
			seg, err := CompileSegment(pattern)
			if err != nil {
				return
			}
			seg.Match(name)
			if pattern != "" && strings.Trim(pattern, "*") == "" && !seg.Match(name) {
				t.Fatalf("%q does not match %q", pattern, name)
			}
			if !strings.ContainsAny(pattern, `*?[\`) && utf8.ValidString(pattern) && !seg.Match(pattern) {
				t.Fatalf("literal pattern %q does not match itself", pattern)
			}
		})
	})
}

func FuzzCompilePath(f *testing.F) {
	f.Fuzz(func(t *testing.T, pattern, path string) {
		fuzzguard.Run(len(pattern)+len(path), func() {
			p, err := CompilePath(pattern)
			if err != nil {
				return
			}
			p.Match(strings.Split(path, "/"))
			if onlyDoubleStars(pattern) && !p.Match(strings.Split(path, "/")) {
				t.Fatalf("%q does not match %q", pattern, path)
			}
		})
	})
}

// onlyDoubleStars reports whether a path pattern is ** elements and slashes, with at
// least one **: it matches every path.
func onlyDoubleStars(pattern string) bool {
	stars := false
	for _, e := range strings.Split(pattern, "/") {
		switch e {
		case "**":
			stars = true
		case "":
		default:
			return false
		}
	}
	return stars
}

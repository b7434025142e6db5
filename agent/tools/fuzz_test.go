package tools

import (
	"errors"
	"github.com/agentrun/agentrun/fuzzguard"
	"strings"
	"testing"
	"unicode/utf8"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/.

func FuzzClassify(f *testing.F) {
	env := newEnv(f, DefaultMode)
	all, none := NewPolicy(allAccess), Policy{}
	f.Fuzz(func(t *testing.T, command string) {
		fuzzguard.Run(len(command), func() {
			v := classifyCommand(command, env)
			if v.need == 0 || v.need&^allAccess != 0 {
				t.Fatalf("required %s for %q", v.need, command)
			}
			if err := all.CheckCommand(command, env); err != nil {
				t.Fatalf("7777 denied %q: %v", command, err)
			}
			var denied *DeniedError
			if err := none.CheckCommand(command, env); !errors.As(err, &denied) || denied.Required.Access() != v.need {
				t.Fatalf("0000 allowed %q or required differs: %v", command, err)
			}
		})
	})
}

func FuzzGlob(f *testing.F) {
	f.Fuzz(func(t *testing.T, pattern, path string) {
		fuzzguard.Run(len(pattern)+len(path), func() {
			g, err := compileGlob(pattern)
			if err != nil {
				return
			}
			g.match(path)
			if !strings.ContainsAny(pattern, `*?[{\`) && pattern != "" && !strings.Contains(pattern, "//") &&
				!strings.HasPrefix(pattern, "/") && !strings.HasSuffix(pattern, "/") && utf8.ValidString(pattern) {
				if !g.match(pattern) {
					t.Fatalf("literal pattern %q does not match itself", pattern)
				}
			}
		})
	})
}

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

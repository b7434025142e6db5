package policy

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/fuzzguard"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/.

func FuzzClassify(f *testing.F) {
	d := newDirs(f)
	all, none := New(allAccess), Policy{}
	f.Fuzz(func(t *testing.T, command string) {
		fuzzguard.Run(len(command), func() {
			v := classifyCommand(command, d)
			if v.need == 0 || v.need&^allAccess != 0 {
				t.Fatalf("required %s for %q", v.need, command)
			}
			if err := all.CheckCommand(command, d); err != nil {
				t.Fatalf("7777 denied %q: %v", command, err)
			}
			var denied *DeniedError
			if err := none.CheckCommand(command, d); !errors.As(err, &denied) || denied.Required.Access() != v.need {
				t.Fatalf("0000 allowed %q or required differs: %v", command, err)
			}
		})
	})
}

func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, mode string) {
		fuzzguard.Run(len(mode), func() {
			p, err := Parse(mode)
			switch {
			case err != nil && p != (Policy{}):
				t.Fatalf("invalid %q parsed to %s, not the zero Policy", mode, p)
			case err != nil && !strings.Contains(err.Error(), "bash_mode"):
				t.Fatalf("error %q does not name the field", err)
			case err == nil && p.String() != mode:
				t.Fatalf("%q parsed to %s", mode, p)
			}
		})
	})
}

// FuzzCheckPath checks CheckPath and CheckOpened: everything is allowed under 7777,
// nothing under 0000, and a path needs the bits of one scope, for its op only.
func FuzzCheckPath(f *testing.F) {
	d := newDirs(f)
	all, none := New(allAccess), Policy{}
	f.Fuzz(func(t *testing.T, path string, write bool) {
		fuzzguard.Run(len(path), func() {
			op, perm := OpRead, WorkspaceRead
			if write {
				op, perm = OpWrite, WorkspaceWrite
			}
			abs := path
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(d.Workspace, abs)
			}
			for name, check := range map[string]func(Policy) error{
				"CheckPath":   func(p Policy) error { return p.CheckPath(op, path, d) },
				"CheckOpened": func(p Policy) error { return p.CheckOpened(op, abs, abs, d) },
			} {
				if err := check(all); err != nil {
					t.Fatalf("%s: 7777 denied %s %q: %v", name, op, path, err)
				}
				var denied *DeniedError
				if err := check(none); !errors.As(err, &denied) {
					t.Fatalf("%s: 0000 allowed %s %q: %v", name, op, path, err)
				}
				switch need := denied.Required.Access(); need {
				case 0, perm, perm << 3, perm << 6, perm << 9:
				default:
					t.Fatalf("%s: %s %q requires %s", name, op, path, need)
				}
			}
		})
	})
}

package jobs

import (
	"errors"
	"github.com/agentrun/agentrun/fuzzguard"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics, that its errors are problem lists, and
// that a spec it accepts expands, has a stable digest and is accepted by Schema.
// Seeds: the valid specs in testdata/valid (their prompt and script files resolve
// there) and the corpus in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/valid/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	sch := specSchema(f)
	env := mapEnv(map[string]string{"HOME": "/home/fuzz", "EMPTY": "", "N": "3"})
	path := filepath.Join("testdata", "valid", "fuzz.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzguard.Run(len(data), func() {
			s, err := Parse(path, data, env)
			if err != nil {
				var se *SpecError
				if !errors.As(err, &se) || len(se.Errors) == 0 {
					t.Fatalf("error %T %v is not a *SpecError with problems", err, err)
				}
				for _, p := range se.Errors {
					if p.Message == "" {
						t.Fatalf("problem without a message: %+v", p)
					}
				}
				return
			}
			sessions, err := s.Sessions()
			if err != nil {
				t.Fatalf("parsed spec does not expand: %v", err)
			}
			if len(sessions) == 0 {
				t.Fatal("parsed spec has no sessions")
			}
			if d1, d2 := s.Digest(), s.Digest(); d1 == "" || d1 != d2 {
				t.Fatalf("digest %q then %q", d1, d2)
			}
			v, ok := yamlValue(t, data)
			if !ok {
				// Only the ignored x- keys can hold what JSON cannot (a cyclic alias, .inf):
				// the parser rejects it everywhere else.
				return
			}
			if err := sch.Validate(v); err != nil {
				t.Fatalf("the schema rejects a spec that Parse accepts: %v", err)
			}
		})
	})
}

// FuzzParseMCPConfig checks that ParseMCPConfig never panics, that its errors are
// problem lists, and that the servers it accepts are each one transport.
// Seeds: testdata/mcp/*.json and the corpus in testdata/fuzz/FuzzParseMCPConfig.
func FuzzParseMCPConfig(f *testing.F) {
	files, err := filepath.Glob("testdata/mcp/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	env := mapEnv(map[string]string{"TOKEN": "t", "EMPTY": ""})
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzguard.Run(len(data), func() {
			servers, err := ParseMCPConfig(".mcp.json", data, env)
			if err != nil {
				var se *SpecError
				if !errors.As(err, &se) || len(se.Errors) == 0 {
					t.Fatalf("error %T %v is not a *SpecError with problems", err, err)
				}
				return
			}
			for _, s := range servers {
				if (s.Type == MCPStdio) == (s.Command == "") || (s.Type == MCPHTTP) == (s.URL == "") {
					t.Fatalf("server %+v is not one transport", s)
				}
				if s.StartupTimeout <= 0 || s.CallTimeout <= 0 {
					t.Fatalf("server %+v has no timeouts", s)
				}
				if _, _, err := s.Expand(env); err != nil {
					t.Fatalf("accepted server does not expand: %v", err)
				}
			}
		})
	})
}

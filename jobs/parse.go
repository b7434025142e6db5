package jobs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// Limits of a job spec.
const (
	// MaxSpecBytes is the largest spec file Load reads.
	MaxSpecBytes = 8 << 20
	// MaxPromptBytes is the largest prompt file, and the largest rendered prompt or system text.
	MaxPromptBytes = 1 << 20
	// MaxSessions is the most sessions one spec may expand into.
	MaxSessions = 20_000
	// MaxKeyBytes is the longest session key; keys name directories.
	MaxKeyBytes = 200
	// MaxRenderedBytes is the most prompt and system text all sessions of a spec may
	// render together.
	MaxRenderedBytes = 64 << 20
)

// Load reads the job spec at path and parses it with Parse. Reading problems are
// returned wrapped (ErrTooLarge for a file over MaxSpecBytes); problems of the content
// are a *SpecError.
func Load(path string, env func(string) (string, bool)) (*Spec, error) {
	data, err := readSpec(path)
	if err != nil {
		return nil, fmt.Errorf("load job spec: %w", err)
	}
	if len(data) > MaxSpecBytes {
		return nil, fmt.Errorf("load job spec %s: %w (over %d bytes)", path, ErrTooLarge, MaxSpecBytes)
	}
	return Parse(path, data, env)
}

// Parse parses and validates the job spec data read from path. path names the file in
// messages and anchors relative paths (prompt_file, script, workspace.dir, sandbox
// paths); it need not exist. env looks up ${VAR} references (usually os.LookupEnv; nil
// defines no variables). Parse also expands the spec, so that a spec that parses also
// has valid Sessions. Every problem found is returned together in a *SpecError, and
// the Spec is nil then.
func Parse(path string, data []byte, env func(string) (string, bool)) (*Spec, error) {
	ps := &problems{file: path}
	root := parseYAML(data, ps)
	if root == nil {
		return nil, ps.err()
	}
	s := &Spec{file: path, dir: absDir(path), pos: map[string]position{}}
	d := newDecoder(ps, env, s.pos)
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		ps.add(posOf(root), "", "empty job spec: want a mapping with version and jobs")
		return nil, ps.err()
	}
	d.decode(root, reflect.ValueOf(s).Elem(), "", opts{})
	if _, set := s.pos["concurrency"]; !set {
		s.Concurrency = DefaultConcurrency
	}
	v := validator{s: s, ps: ps, d: d, bad: map[int]bool{}}
	v.validate()
	if !v.badDefaults {
		sessions, eps := s.expand(v.bad)
		ps.list = append(ps.list, eps.list...)
		s.checkKeys(sessions, ps)
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// parseYAML returns the root node of the single document in data, or nil after
// reporting why there is none.
func parseYAML(data []byte, ps *problems) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			ps.add(position{1, 1}, "", "empty job spec: want a mapping with version and jobs")
		} else {
			syntaxProblem(err, data, ps)
		}
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		syntaxProblem(err, data, ps)
		return nil
	default:
		ps.add(posOf(&extra), "", "a job spec holds one YAML document; remove the second (after ---)")
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		ps.add(position{1, 1}, "", "empty job spec: want a mapping with version and jobs")
		return nil
	}
	return doc.Content[0]
}

// absDir returns the absolute directory of path, or its plain directory when the
// working directory is unknown.
func absDir(path string) string {
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

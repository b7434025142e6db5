// Package eventschema publishes the JSON Schema (draft 2020-12) of agentrun's event
// lines, every type of stream.jsonl, events.jsonl and the stream-json output, for
// schema_version 1 (protocol.SchemaVersion), and validates lines against it. The
// schema is strict: a member it does not declare is an error, so a new field must be
// declared in events.schema.json (and, when it is not additive, the version raised).
package eventschema

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed events.schema.json
var schema []byte

// ID is the schema's $id.
const ID = "https://github.com/agentrun/agentrun/schema/events/v1.json"

// Schema returns the JSON Schema document, as `agentrun schema --events` prints it.
func Schema() []byte { return bytes.Clone(schema) }

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("event schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(ID, doc); err != nil {
		return nil, fmt.Errorf("event schema: %w", err)
	}
	s, err := c.Compile(ID)
	if err != nil {
		return nil, fmt.Errorf("event schema: %w", err)
	}
	return s, nil
})

// ValidateLine reports whether line is one valid event.
func ValidateLine(line []byte) error {
	s, err := compiled()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(v)
}

// ValidateFile validates every line of the event file at path; the error names each
// invalid line by number.
func ValidateFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var errs []error
	for n := 1; sc.Scan(); n++ {
		if err := ValidateLine(sc.Bytes()); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", path, n, err))
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("read %s: %w", path, err))
	}
	return errors.Join(errs...)
}

// ValidateTree validates every stream.jsonl and events.jsonl under root and returns
// how many files it read.
func ValidateTree(root string) (int, error) {
	var files int
	var errs []error
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (d.Name() == "stream.jsonl" || d.Name() == "events.jsonl") {
			files++
			errs = append(errs, ValidateFile(path))
		}
		return nil
	})
	return files, errors.Join(append(errs, err)...)
}

package jobs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specSchema compiles Schema().
func specSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	require.NoError(t, c.AddResource("mem:///jobs.schema.json", doc))
	sch, err := c.Compile("mem:///jobs.schema.json")
	require.NoError(t, err)
	return sch
}

// yamlValue converts a YAML document as written (no ${VAR} expansion) to the JSON value
// an editor would check against the schema.
func yamlValue(t testing.TB, data []byte) (any, bool) {
	t.Helper()
	ps := &problems{}
	root := parseYAML(data, ps)
	if root == nil {
		return nil, false
	}
	b, ok := newDecoder(ps, nil, map[string]position{}).toJSON(root, "", false)
	if !ok {
		return nil, false
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	return v, true
}

// validSpecs returns the valid specs of testdata and the examples directory.
func validSpecs(t *testing.T) []string {
	files, err := filepath.Glob("testdata/valid/*.yaml")
	require.NoError(t, err)
	examples, err := filepath.Glob("../examples/*.yaml")
	require.NoError(t, err)
	return append(files, examples...)
}

func TestSchemaAcceptsValidSpecs(t *testing.T) {
	sch := specSchema(t)
	for _, file := range validSpecs(t) {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			v, ok := yamlValue(t, data)
			require.True(t, ok)
			assert.NoError(t, sch.Validate(v))
		})
	}
}

func TestSchemaRejects(t *testing.T) {
	sch := specSchema(t)
	tests := map[string]string{
		"unknown top-level key": doc("version: 1", "colour: red", "jobs: [{id: a, prompt: hi}]"),
		"unknown key in a job":  doc("version: 1", "jobs: [{id: a, prompt: hi, modle: x}]"),
		"unknown nested key":    doc("version: 1", "defaults: {workspace: {mod: copy}}", "jobs: [{id: a, prompt: hi}]"),
		"bare number duration":  doc("version: 1", "jobs: [{id: a, prompt: hi, timeout: 30}]"),
		"bad provider":          doc("version: 1", "jobs: [{id: a, prompt: hi, provider: antropic}]"),
		"unknown tool":          doc("version: 1", "jobs: [{id: a, prompt: hi, tools: [Bsh]}]"),
		"version 2":             doc("version: 2", "jobs: [{id: a, prompt: hi}]"),
		"no jobs":               doc("version: 1", "jobs: []"),
		"no prompt":             doc("version: 1", "jobs: [{id: a}]"),
		"both prompts":          doc("version: 1", "jobs: [{id: a, prompt: hi, prompt_file: p.md}]"),
		"bad id":                doc("version: 1", "jobs: [{id: 'a b', prompt: hi}]"),
		"zero repeat":           doc("version: 1", "jobs: [{id: a, prompt: hi, repeat: 0}]"),
		"matrix value mapping":  doc("version: 1", "jobs: [{id: a, prompt: hi, matrix: {m: [{a: b}]}}]"),
		"bad sandbox level":     doc("version: 1", "defaults: {sandbox: {level: tight}}", "jobs: [{id: a, prompt: hi}]"),
		"path of ~user":         doc("version: 1", "jobs: [{id: a, prompt: hi, sandbox: {writable: ['~bob/x']}}]"),
		"empty path":            doc("version: 1", "jobs: [{id: a, prompt: hi, sandbox: {readable: ['']}}]"),
		"URL as a host":         doc("version: 1", "jobs: [{id: a, prompt: hi, network: {allow: ['http://x']}}]"),
		"host with a port":      doc("version: 1", "jobs: [{id: a, prompt: hi, network: {allow: ['host:443']}}]"),
		"host with a space":     doc("version: 1", "jobs: [{id: a, prompt: hi, network: {allow: ['a b']}}]"),
		"unknown network key":   doc("version: 1", "jobs: [{id: a, prompt: hi, network: {allowed: [x]}}]"),
	}
	for name, give := range tests {
		t.Run(name, func(t *testing.T) {
			v, ok := yamlValue(t, []byte(give))
			require.True(t, ok)
			assert.Error(t, sch.Validate(v))
		})
	}
}

func TestSchemaShape(t *testing.T) {
	var root struct {
		Schema     string `json:"$schema"`
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
		Required             []string `json:"required"`
		AdditionalProperties bool     `json:"additionalProperties"`
	}
	require.NoError(t, json.Unmarshal(Schema(), &root))
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", root.Schema)
	assert.ElementsMatch(t, []string{"version", "jobs"}, root.Required)
	assert.False(t, root.AdditionalProperties)
	for _, f := range fieldsOf(specType) {
		assert.NotEmpty(t, root.Properties[f.name].Description, "property %s has no description", f.name)
	}
	assert.Equal(t, Schema(), Schema(), "the schema is deterministic")
}

func TestSchemaID(t *testing.T) {
	var root struct {
		ID string `json:"$id"`
	}
	require.NoError(t, json.Unmarshal(Schema(), &root))
	assert.Equal(t, SchemaID, root.ID)
}

// TestSchemaFile checks that jobs.schema.json, which editors load through the examples'
// modeline, is the schema of this code: `go run ./cmd/agentrun schema > jobs/jobs.schema.json`.
func TestSchemaFile(t *testing.T) {
	b, err := os.ReadFile("jobs.schema.json")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(bytes.TrimSpace(Schema()), bytes.TrimSpace(b)),
		"jobs.schema.json is stale: go run ./cmd/agentrun schema > jobs/jobs.schema.json")
}

// TestSchemaAgreesOnBashMode checks the schema and Parse against each other.
func TestSchemaAgreesOnBashMode(t *testing.T) {
	sch := specSchema(t)
	tests := map[string]struct {
		give    string
		wantErr bool
	}{
		"four octal digits":       {give: `"0467"`},
		"a variable":              {give: `'${MODE:-0405}'`},
		"digit 9":                 {give: `"0999"`, wantErr: true},
		"three digits":            {give: `"467"`, wantErr: true},
		"five digits":             {give: `"04670"`, wantErr: true},
		"unquoted three digits":   {give: `467`, wantErr: true},
		"unquoted octal digits":   {give: `0467`, wantErr: true},
		"unquoted with a digit 9": {give: `0999`, wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			data := []byte(doc("version: 1", "jobs: [{id: a, prompt: hi, bash_mode: "+tt.give+"}]"))
			v, ok := yamlValue(t, data)
			require.True(t, ok)
			_, parseErr := Parse("jobs.yaml", data, func(string) (string, bool) { return "", false })
			if tt.wantErr {
				assert.Error(t, sch.Validate(v), "schema")
				assert.ErrorContains(t, parseErr, "bash_mode", "parse")
				return
			}
			assert.NoError(t, sch.Validate(v), "schema")
			assert.NoError(t, parseErr, "parse")
		})
	}
}

// TestExamplesNameTheSchema checks that every example spec starts with the modeline
// that points yaml-language-server at jobs.schema.json.
func TestExamplesNameTheSchema(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			first, _, _ := bytes.Cut(b, []byte("\n"))
			assert.Equal(t, "# yaml-language-server: $schema=../jobs/jobs.schema.json", string(first))
			_, err = os.Stat(filepath.Join(filepath.Dir(file), "../jobs/jobs.schema.json"))
			assert.NoError(t, err, "the modeline's path")
		})
	}
}

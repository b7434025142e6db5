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
	c := jsonConverter{d: newDecoder(ps, nil, map[string]position{})}
	b, ok := c.convert(root, "")
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

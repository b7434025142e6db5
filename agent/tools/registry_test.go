package tools

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuiltin(t *testing.T) {
	t.Parallel()
	var names []string
	for _, tool := range Builtin() {
		names = append(names, tool.Spec().Name)
	}
	assert.Equal(t, []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "TodoWrite"}, names)
	for _, name := range names {
		tool, ok := Lookup(name)
		require.True(t, ok, name)
		assert.Equal(t, name, tool.Spec().Name)
	}
	_, ok := Lookup("Task")
	assert.False(t, ok)
	_, ok = Lookup("read")
	assert.False(t, ok, "names are case-sensitive")
}

// TestSpecSchemas compiles every input schema and checks valid and invalid inputs
// against it.
func TestSpecSchemas(t *testing.T) {
	t.Parallel()
	valid := map[string]string{
		"Read":      `{"path":"a.go","offset":2,"limit":10}`,
		"Write":     `{"path":"a.go","content":""}`,
		"Edit":      `{"path":"a.go","old_string":"a","new_string":"b","replace_all":true}`,
		"Bash":      `{"command":"ls","timeout":5,"description":"list"}`,
		"Glob":      `{"pattern":"**/*.go","path":"src"}`,
		"Grep":      `{"pattern":"x","output_mode":"count","context":2,"case_insensitive":true}`,
		"TodoWrite": `{"todos":[{"content":"a","status":"pending","activeForm":"Doing a"}]}`,
	}
	invalid := map[string]string{
		"Read":      `{"offset":2}`,
		"Write":     `{"path":"a.go"}`,
		"Edit":      `{"path":"a.go","old_string":"a"}`,
		"Bash":      `{"timeout":5}`,
		"Glob":      `{"path":"src"}`,
		"Grep":      `{"pattern":"x","output_mode":"lines"}`,
		"TodoWrite": `{"todos":[{"content":"a","status":"done"}]}`,
	}
	for _, tool := range Builtin() {
		spec := tool.Spec()
		t.Run(spec.Name, func(t *testing.T) {
			assert.NotEmpty(t, spec.Description)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(spec.InputSchema))
			require.NoError(t, err)
			c := jsonschema.NewCompiler()
			require.NoError(t, c.AddResource("schema.json", doc))
			sch, err := c.Compile("schema.json")
			require.NoError(t, err)
			assert.NoError(t, sch.Validate(decodeAny(t, valid[spec.Name])))
			assert.Error(t, sch.Validate(decodeAny(t, invalid[spec.Name])))
		})
	}
}

func decodeAny(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(s)))
	require.NoError(t, err)
	return v
}

func TestNumberAndFlagInputs(t *testing.T) {
	t.Parallel()
	var n struct {
		A, B, C, D number
	}
	require.NoError(t, json.Unmarshal([]byte(`{"A":5,"B":"7","C":null,"D":3.0}`), &n))
	assert.Equal(t, number{set: true, n: 5}, n.A)
	assert.Equal(t, number{set: true, n: 7}, n.B)
	assert.Equal(t, number{}, n.C)
	assert.Equal(t, number{set: true, n: 3}, n.D)
	assert.Error(t, json.Unmarshal([]byte(`{"A":"x"}`), &n))
	assert.Error(t, json.Unmarshal([]byte(`{"A":1e300}`), &n))

	var f struct{ A, B, C flag }
	require.NoError(t, json.Unmarshal([]byte(`{"A":true,"B":"false","C":"TRUE"}`), &f))
	assert.Equal(t, struct{ A, B, C flag }{true, false, true}, f)
	assert.Error(t, json.Unmarshal([]byte(`{"A":"yes"}`), &f))
}

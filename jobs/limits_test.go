package jobs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deepSchema is a spec whose output_schema nests depth items deep.
func deepSchema(depth int) string {
	return doc("version: 1", "jobs:", "  - id: a", "    prompt: p",
		"    output_schema: "+strings.Repeat("{items: ", depth)+"{}"+strings.Repeat("}", depth))
}

// wideSchema is a spec whose output_schema has n properties.
func wideSchema(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "p%d: {type: string, enum: [a, b]}, ", i)
	}
	return doc("version: 1", "jobs:", "  - id: a", "    prompt: p",
		"    output_schema: {type: object, properties: {"+b.String()+"}}")
}

// TestOutputSchemaLimits checks that an output_schema too deep or too large is one
// problem at the value past the limit, found before the schema compiler runs (which
// took 11–16 s and 500 MB for 1,600 levels, and never finished 3,000).
func TestOutputSchemaLimits(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantCol  int
		wantMsg  string
		wantPath string
	}{
		{name: "1600 deep", give: deepSchema(1600), wantCol: 20 + 8*MaxOutputSchemaDepth,
			wantMsg: "nested more than 64 levels deep", wantPath: strings.Repeat(".items", MaxOutputSchemaDepth)},
		{name: "3000 deep", give: deepSchema(3000), wantCol: 20 + 8*MaxOutputSchemaDepth,
			wantMsg: "nested more than 64 levels deep", wantPath: strings.Repeat(".items", MaxOutputSchemaDepth)},
		{name: "too large", give: wideSchema(8000), wantMsg: "too large: more than 131072 bytes as JSON by this value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := specProblems(t, tt.give, nil, nil)
			require.Len(t, got, 1, "problems: %.500v", got)
			assert.Equal(t, 5, got[0].Line)
			if tt.wantCol > 0 {
				assert.Equal(t, tt.wantCol, got[0].Column)
			}
			assert.Contains(t, got[0].Message, tt.wantMsg)
			assert.Equal(t, "jobs[0].output_schema"+tt.wantPath, got[0].Field[:min(len(got[0].Field), len("jobs[0].output_schema"+tt.wantPath))])
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		_, err := Parse("spec.yaml", []byte(deepSchema(MaxOutputSchemaDepth-1)), nil)
		require.NoError(t, err)
	})
}

// BenchmarkOutputSchemaTooDeep measures the rejection of a 3,000-level output_schema;
// it must take well under 100 ms (it never finished before the limit).
func BenchmarkOutputSchemaTooDeep(b *testing.B) {
	data := []byte(deepSchema(3000))
	for b.Loop() {
		if _, err := Parse("spec.yaml", data, nil); err == nil {
			b.Fatal("accepted")
		}
	}
}

// TestSyntaxErrorPositions checks that every YAML syntax error carries a line and a
// column: the library gives no column, and no line for bad bytes.
func TestSyntaxErrorPositions(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantLine int
		wantCol  int
		wantMsg  string
	}{
		{name: "tab indentation", give: doc("version: 1", "jobs:", "\t- id: a"),
			wantLine: 3, wantCol: 1, wantMsg: "a tab, which YAML does not allow for indentation"},
		{name: "tab after spaces", give: doc("version: 1", "jobs:", "  - id: a", "  \tprompt: x"),
			wantLine: 4, wantCol: 3, wantMsg: "tab"},
		{name: "NUL byte", give: doc("version: 1", "jobs:", "  - id: a\x00b"),
			wantLine: 3, wantCol: 10, wantMsg: `control character '\x00'`},
		{name: "invalid UTF-8", give: doc("version: 1", "jobs:", "  - id: é\xff"),
			wantLine: 3, wantCol: 10, wantMsg: "invalid UTF-8 byte 0xff"},
		{name: "100,000-deep flow nesting", give: doc("version: 1", "jobs: "+strings.Repeat("[", 100_000)),
			wantLine: 2, wantCol: 6 + maxYAMLDepth, wantMsg: "exceeded max depth"},
		{name: "1 MB key", give: doc("version: 1", strings.Repeat("k", 1<<20)+": 1"),
			wantLine: 2, wantCol: 1, wantMsg: "a key longer than 1024 characters?"},
		{name: "unclosed list", give: doc("version: [1", "jobs: []"),
			wantLine: 2, wantCol: 1, wantMsg: "did not find expected ',' or ']'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := specProblems(t, tt.give, nil, nil)
			require.Len(t, got, 1, "problems: %v", got)
			assert.Equal(t, tt.wantLine, got[0].Line, "line of %v", got[0])
			assert.Equal(t, tt.wantCol, got[0].Column, "column of %v", got[0])
			assert.Contains(t, got[0].Message, tt.wantMsg)
		})
	}
}

// TestNestedDefaults checks that ${A:-${B:-x}} expands the inner default, which was
// sent literally, and that nesting has a limit.
func TestNestedDefaults(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{name: "inner default", give: "${A:-${B:-x}}", want: "x"},
		{name: "inner variable", give: "${A:-${B:-x}}", env: map[string]string{"B": "b"}, want: "b"},
		{name: "outer variable", give: "${A:-${B:-x}}", env: map[string]string{"A": "a"}, want: "a"},
		{name: "text around", give: "<${A:-(${B:-x})}>${C:-c}}", want: "<(x)>c}"},
		{name: "dollar in default", give: "${A:-$$5}", want: "$5"},
		{name: "undefined inner", give: "${A:-${B}}", wantErr: "undefined variable ${B}"},
		{name: "unterminated", give: "${A:-${B:-x}", wantErr: "unterminated ${"},
		{name: "too deep", give: strings.Repeat("${A:-", 9) + "x" + strings.Repeat("}", 9), wantErr: "defaults nested more than 8 deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := expandVars(tt.give, mapEnv(tt.env))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("in a spec", func(t *testing.T) {
		s, err := Parse("spec.yaml", []byte(doc("version: 1", "jobs:", "  - id: a", "    prompt: 'model ${M:-${FALLBACK:-small}}'")), nil)
		require.NoError(t, err)
		sessions, err := s.Sessions()
		require.NoError(t, err)
		assert.Equal(t, "model small", sessions[0].Prompt)
	})
}

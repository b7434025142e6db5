package protocol

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorKindsListsEveryKind checks that ErrorKinds names every error kind constant
// of message.go, so that a new kind is never missing from the lists built on it
// (such as run --retry-errors).
func TestErrorKindsListsEveryKind(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "message.go", nil, 0)
	require.NoError(t, err)
	var consts []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue // iota
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING || len(name.Name) < 4 || name.Name[:3] != "Err" {
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				consts = append(consts, v)
			}
		}
	}
	require.NotEmpty(t, consts)
	assert.ElementsMatch(t, consts, ErrorKinds())
}

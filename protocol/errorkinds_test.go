package protocol

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListsNameEveryConstant checks that ErrorKinds names every error kind constant of
// message.go and StopReasons every stop reason of stop.go, so that a new one is never
// missing from the lists built on them (such as run --retry-errors, or the stop
// reasons a script may name).
func TestListsNameEveryConstant(t *testing.T) {
	tests := map[string]struct {
		file, prefix string
		list         []string
	}{
		"error kinds":  {file: "message.go", prefix: "Err", list: words(ErrorKinds())},
		"stop reasons": {file: "stop.go", prefix: "Stop", list: words(StopReasons())},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			consts := stringConsts(t, tt.file, tt.prefix)
			require.NotEmpty(t, consts)
			assert.ElementsMatch(t, consts, tt.list)
		})
	}
}

func words[S ~string](list []S) []string {
	out := make([]string, len(list))
	for i, w := range list {
		out[i] = string(w)
	}
	return out
}

// stringConsts returns the values of the string constants of file whose names start
// with prefix and go on.
func stringConsts(t *testing.T, file, prefix string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
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
				if !ok || lit.Kind != token.STRING || len(name.Name) <= len(prefix) || !strings.HasPrefix(name.Name, prefix) {
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				consts = append(consts, v)
			}
		}
	}
	return consts
}

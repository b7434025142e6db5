package jobs

import (
	"maps"
	"reflect"
	"slices"
	"text/template"
	"text/template/parse"
)

// matrixUse is what a job's templates read of its matrix.
type matrixUse struct {
	// names are the matrix names read as .matrix.NAME, $.matrix.NAME or
	// index .matrix "NAME".
	names map[string]bool
	// whole is true when a template uses .matrix in another way (range over it, with,
	// a variable, printing it), which may read any name.
	whole bool
}

// uses reports whether the templates may read the matrix name.
func (u matrixUse) uses(name string) bool { return u.whole || u.names[name] }

// matrixUseOf walks the parse trees of the templates.
func matrixUseOf(ts ...*template.Template) matrixUse {
	u := matrixUse{names: map[string]bool{}}
	for _, t := range ts {
		if t != nil && t.Tree != nil {
			u.node(t.Root)
		}
	}
	return u
}

func (u *matrixUse) node(n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			u.node(c)
		}
	case *parse.ActionNode:
		u.node(n.Pipe)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			u.node(c)
		}
	case *parse.CommandNode:
		if name, ok := indexedName(n); ok {
			u.names[name] = true
			return
		}
		for _, a := range n.Args {
			u.node(a)
		}
	case *parse.FieldNode:
		u.ident(n.Ident)
	case *parse.VariableNode:
		if len(n.Ident) > 0 && n.Ident[0] == "$" {
			u.ident(n.Ident[1:])
		}
	case *parse.ChainNode:
		// (.matrix).name and the like: whatever the chain starts with is read whole.
		u.node(n.Node)
	case *parse.IfNode:
		u.branch(&n.BranchNode)
	case *parse.RangeNode:
		u.branch(&n.BranchNode)
	case *parse.WithNode:
		u.branch(&n.BranchNode)
	case *parse.TemplateNode:
		u.node(n.Pipe)
	}
}

func (u *matrixUse) branch(b *parse.BranchNode) {
	u.node(b.Pipe)
	u.node(b.List)
	u.node(b.ElseList)
}

// ident records a field chain that starts at the data: .matrix.NAME reads NAME, .matrix
// alone reads the whole matrix.
func (u *matrixUse) ident(chain []string) {
	switch {
	case len(chain) == 0 || chain[0] != "matrix":
	case len(chain) == 1:
		u.whole = true
	default:
		u.names[chain[1]] = true
	}
}

// indexedName recognises index .matrix "NAME".
func indexedName(c *parse.CommandNode) (string, bool) {
	if len(c.Args) != 3 {
		return "", false
	}
	fn, ok := c.Args[0].(*parse.IdentifierNode)
	if !ok || fn.Ident != "index" {
		return "", false
	}
	var chain []string
	switch a := c.Args[1].(type) {
	case *parse.FieldNode:
		chain = a.Ident
	case *parse.VariableNode:
		if len(a.Ident) == 0 || a.Ident[0] != "$" {
			return "", false
		}
		chain = a.Ident[1:]
	}
	key, ok := c.Args[2].(*parse.StringNode)
	if !ok || len(chain) != 1 || chain[0] != "matrix" {
		return "", false
	}
	return key.Text, true
}

// matrixCandidates are the names a matrix name may have been meant as: the settings a
// matrix can override (nested ones as "thinking.effort") and the names the templates
// read.
func matrixCandidates(u matrixUse) []string {
	var out []string
	for _, f := range fieldsOf(settingsType) {
		t := settingsType.FieldByIndex(f.index).Type
		if isScalar(t) {
			out = append(out, f.name)
			continue
		}
		if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
			for _, g := range fieldsOf(t.Elem()) {
				if isScalar(t.Elem().FieldByIndex(g.index).Type) {
					out = append(out, f.name+"."+g.name)
				}
			}
		}
	}
	return append(out, slices.Sorted(maps.Keys(u.names))...)
}

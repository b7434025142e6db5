// Package yamljson writes a YAML node tree (go.yaml.in/yaml/v3) as compact JSON: the
// one converter behind a job's output_schema and a script's tool inputs. Mapping keys
// keep their order, aliases are expanded, a number written in JSON's grammar is kept
// exactly as written, and <, > and & stay unescaped. The first problem stops the
// conversion with an *Error that names the node and the path of the value.
package yamljson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Options set the limits of a conversion and the hooks for what its callers decide.
// The zero value converts without limits, expanding aliases (refusing cycles),
// refusing non-scalar and duplicate keys, and writing strings as they are.
type Options struct {
	// MaxDepth is how deep mappings and sequences may nest (a value at depth MaxDepth
	// is refused); 0 means no limit.
	MaxDepth int
	// MaxBytes is the most bytes of JSON the conversion may write; 0 means no limit.
	MaxBytes int
	// Budget, when set, is the number of values still allowed: each value visited,
	// an alias counted each time it is used, takes one, and the conversion fails once
	// it goes below zero. Share one counter across calls to bound them all.
	Budget *int
	// Enter, when set, is called for every value before it is converted; it returns
	// the value to convert (an alias it leaves unresolved is expanded as usual) and a
	// function called once the value is written.
	Enter func(n *yaml.Node, path string) (*yaml.Node, func(), error)
	// Pairs, when set, lists the entries of a mapping in the order to write them,
	// replacing the default, which refuses non-scalar and duplicate keys and writes
	// a merge key (<<) as an ordinary key.
	Pairs func(n *yaml.Node, path string) ([]Pair, error)
	// String, when set, returns the text of a string scalar (tag !!str), for
	// expansions such as ${VAR}.
	String func(n *yaml.Node, path string) (string, error)
}

// Pair is one key and value of a mapping.
type Pair struct{ Key, Value *yaml.Node }

// Error is why a value has no JSON form: the node at fault, the path of the value
// (built with Join and Index from the path given to Append) and what is wrong.
type Error struct {
	Node *yaml.Node
	Path string
	Msg  string
	// Err is the error a hook returned, if any.
	Err error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Unwrap returns the error a hook returned.
func (e *Error) Unwrap() error { return e.Err }

// Join is the path of key in the mapping at path: "a.b", or "b" at the root ("").
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index is the path of element i of the sequence at path: "a[0]".
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Append appends the compact JSON form of n to buf. path is the path of n, the
// start of the paths in errors; on error the returned buffer is nil.
func Append(buf []byte, n *yaml.Node, path string, o Options) ([]byte, error) {
	c := &converter{o: o, out: buf, start: len(buf), root: path}
	if err := c.write(n); err != nil {
		return nil, err
	}
	return c.out, nil
}

type converter struct {
	o      Options
	out    []byte
	start  int
	depth  int
	active map[*yaml.Node]bool // the mappings and sequences being written, to stop cycles
	root   string
	segs   []seg // the path below root, built into a string only when needed
	enc    *json.Encoder
	encBuf bytes.Buffer
}

// seg is one step of a path: a key, or an index when index >= 0.
type seg struct {
	key   string
	index int
}

// path is the path of the value being converted, by the rules of Join and Index.
func (c *converter) path() string {
	var b strings.Builder
	b.WriteString(c.root)
	for _, s := range c.segs {
		switch {
		case s.index >= 0:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		case b.Len() > 0:
			b.WriteByte('.')
			fallthrough
		default:
			b.WriteString(s.key)
		}
	}
	return b.String()
}

func (c *converter) fail(n *yaml.Node, format string, args ...any) error {
	return &Error{Node: n, Path: c.path(), Msg: fmt.Sprintf(format, args...)}
}

// hookErr places an error from a hook at n, unless the hook placed it already.
func (c *converter) hookErr(n *yaml.Node, err error) error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	return &Error{Node: n, Path: c.path(), Msg: err.Error(), Err: err}
}

func (c *converter) write(n *yaml.Node) error {
	if c.o.Budget != nil {
		if *c.o.Budget--; *c.o.Budget < 0 {
			return c.fail(n, "too large: too many values after expanding aliases")
		}
	}
	if c.o.MaxDepth > 0 && c.depth >= c.o.MaxDepth {
		return c.fail(n, "nested more than %d levels deep", c.o.MaxDepth)
	}
	if c.o.Enter != nil {
		e, release, err := c.o.Enter(n, c.path())
		if err != nil {
			return c.hookErr(n, err)
		}
		defer release()
		n = e
	}
	if n.Kind == yaml.AliasNode {
		t, err := c.resolve(n)
		if err != nil {
			return err
		}
		n = t
	}
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		if c.active == nil {
			c.active = map[*yaml.Node]bool{}
		}
		c.active[n] = true // an alias to it below is a cycle
		defer delete(c.active, n)
	}
	c.depth++
	defer func() { c.depth-- }()
	var err error
	switch n.Kind {
	case yaml.MappingNode:
		err = c.mapping(n)
	case yaml.SequenceNode:
		err = c.sequence(n)
	case yaml.ScalarNode:
		err = c.scalar(n)
	default:
		err = c.fail(n, "want a JSON value, got %s", Describe(n))
	}
	if err == nil && c.o.MaxBytes > 0 && len(c.out)-c.start > c.o.MaxBytes {
		err = c.fail(n, "too large: more than %d bytes as JSON by this value", c.o.MaxBytes)
	}
	return err
}

// resolve returns the target of alias n, refusing one that contains n.
func (c *converter) resolve(n *yaml.Node) (*yaml.Node, error) {
	t := n.Alias
	switch {
	case t == nil:
		return nil, c.fail(n, "unknown alias *%s", n.Value)
	case c.active[t]:
		return nil, c.fail(n, "alias *%s refers to a value that contains it", n.Value)
	case t.Kind == yaml.AliasNode:
		return nil, c.fail(n, "alias *%s refers to another alias", n.Value)
	}
	return t, nil
}

func (c *converter) mapping(n *yaml.Node) error {
	pairs, err := c.pairs(n)
	if err != nil {
		return err
	}
	c.out = append(c.out, '{')
	for i, p := range pairs {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.str(p.Key.Value)
		c.out = append(c.out, ':')
		c.segs = append(c.segs, seg{key: p.Key.Value, index: -1})
		if err := c.write(p.Value); err != nil {
			return err
		}
		c.segs = c.segs[:len(c.segs)-1]
	}
	c.out = append(c.out, '}')
	return nil
}

// pairs lists the entries of mapping n, through the Pairs hook or by default.
func (c *converter) pairs(n *yaml.Node) ([]Pair, error) {
	if c.o.Pairs != nil {
		pairs, err := c.o.Pairs(n, c.path())
		if err != nil {
			return nil, c.hookErr(n, err)
		}
		return pairs, nil
	}
	pairs := make([]Pair, 0, len(n.Content)/2)
	seen := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if k.Kind != yaml.ScalarNode {
			return nil, c.fail(k, "a JSON object key must be a scalar, got %s", Describe(k))
		}
		if first, dup := seen[k.Value]; dup {
			return nil, &Error{Node: n.Content[i], Path: Join(c.path(), k.Value),
				Msg: fmt.Sprintf("duplicate key %q (first at %d:%d)", k.Value, first.Line, first.Column)}
		}
		seen[k.Value] = n.Content[i]
		pairs = append(pairs, Pair{Key: k, Value: n.Content[i+1]})
	}
	return pairs, nil
}

func (c *converter) sequence(n *yaml.Node) error {
	c.out = append(c.out, '[')
	for i, e := range n.Content {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.segs = append(c.segs, seg{index: i})
		if err := c.write(e); err != nil {
			return err
		}
		c.segs = c.segs[:len(c.segs)-1]
	}
	c.out = append(c.out, ']')
	return nil
}

func (c *converter) scalar(n *yaml.Node) error {
	tag := n.ShortTag()
	if (tag == "!!int" || tag == "!!float") && isJSONNumber(n.Value) {
		c.out = append(c.out, n.Value...) // keeps big and precise numbers exact
		return nil
	}
	switch tag {
	case "!!null":
		c.out = append(c.out, "null"...)
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return c.fail(n, "%q is not a boolean", n.Value)
		}
		c.out = strconv.AppendBool(c.out, b)
	case "!!int":
		return c.integer(n)
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return c.fail(n, "%q is not a number", n.Value)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return c.fail(n, "%s is not a finite number, which JSON cannot hold", n.Value)
		}
		b, _ := json.Marshal(f) // finite, so it cannot fail
		c.out = append(c.out, b...)
	case "!!str":
		s := n.Value
		if c.o.String != nil {
			var err error
			if s, err = c.o.String(n, c.path()); err != nil {
				return c.hookErr(n, err)
			}
		}
		c.str(s)
	case "!!timestamp", "!!binary":
		c.str(n.Value) // as written: JSON has neither, and carries both as text
	default:
		return c.fail(n, "want a JSON value, got %s", Describe(n))
	}
	return nil
}

// integer writes an integer that is not in JSON's grammar (0x1f, 0o17, +1, 1_000).
func (c *converter) integer(n *yaml.Node) error {
	var i int64
	if err := n.Decode(&i); err == nil {
		c.out = strconv.AppendInt(c.out, i, 10)
		return nil
	}
	var u uint64
	if err := n.Decode(&u); err == nil {
		c.out = strconv.AppendUint(c.out, u, 10)
		return nil
	}
	if _, err := strconv.ParseInt(n.Value, 0, 64); errors.Is(err, strconv.ErrRange) {
		return c.fail(n, "integer %s out of range: past 64 bits, write it in decimal", n.Value)
	}
	return c.fail(n, "%q is not an integer", n.Value)
}

// str appends s as a JSON string, leaving <, > and & unescaped. encoding/json writes
// it: the module's other string writer, protocol.AppendJSONString, is out of reach of
// a leaf package, and is checked against encoding/json by its own fuzz test.
func (c *converter) str(s string) {
	if c.enc == nil {
		c.enc = json.NewEncoder(&c.encBuf)
		c.enc.SetEscapeHTML(false)
	}
	c.encBuf.Reset()
	_ = c.enc.Encode(s) // encoding a string into a bytes.Buffer cannot fail
	c.out = append(c.out, bytes.TrimSuffix(c.encBuf.Bytes(), []byte("\n"))...)
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) || s[len(s)-1] < '0' || s[len(s)-1] > '9' {
		return false // json.Unmarshal would allow spaces around it
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}

// Describe names the YAML type and value of n for messages: "a mapping", "a list",
// `the string "x"`, "the integer 3", "null", "a value tagged !x".
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int":
			return "the integer " + n.Value
		case "!!float":
			return "the number " + n.Value
		case "!!bool":
			return "the boolean " + n.Value
		case "!!null":
			return "null"
		case "!!timestamp":
			return "the timestamp " + n.Value
		}
		return fmt.Sprintf("a value tagged %s", n.ShortTag())
	case yaml.AliasNode:
		return "the alias *" + n.Value
	case yaml.DocumentNode:
		return "a document"
	default:
		return "an empty node"
	}
}

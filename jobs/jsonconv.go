package jobs

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Limits of an output_schema, checked while it is converted, before the JSON Schema
// compiler (whose work grows with the square of the depth) sees it.
const (
	// MaxOutputSchemaDepth is how deep mappings and sequences may nest in an output_schema.
	MaxOutputSchemaDepth = 64
	// MaxOutputSchemaBytes is the largest output_schema, as compact JSON.
	MaxOutputSchemaBytes = 128 << 10
)

// jsonConverter writes a YAML value as compact JSON, keeping the order of mapping
// keys, applying merge keys and (when expand is set) ${VAR} expansion in strings. It
// stops at the first value past MaxOutputSchemaDepth or MaxOutputSchemaBytes.
type jsonConverter struct {
	d      *decoder
	expand bool
	b      bytes.Buffer
	depth  int
	over   bool // a limit was reported; write nothing more
}

// convert returns the JSON of n, or false after reporting why it has none.
func (c *jsonConverter) convert(n *yaml.Node, path string) ([]byte, bool) {
	c.b.Reset()
	if !c.write(n, path) {
		return nil, false
	}
	return bytes.Clone(c.b.Bytes()), true
}

func (c *jsonConverter) write(n *yaml.Node, path string) bool {
	if c.over {
		return false
	}
	switch {
	case c.depth >= MaxOutputSchemaDepth:
		c.d.ps.add(posOf(n), path, "nested more than %d levels deep: an output_schema may nest at most %d", MaxOutputSchemaDepth, MaxOutputSchemaDepth)
		c.over = true
		return false
	case c.b.Len() > MaxOutputSchemaBytes:
		c.d.ps.add(posOf(n), path, "output_schema larger than %d bytes as JSON", MaxOutputSchemaBytes)
		c.over = true
		return false
	}
	n, release, ok := c.d.enter(n, path)
	if !ok {
		return false
	}
	defer release()
	c.depth++
	defer func() { c.depth-- }()
	switch n.Kind {
	case yaml.MappingNode:
		c.b.WriteByte('{')
		good := true
		for i, p := range c.d.pairs(n, path) {
			if i > 0 {
				c.b.WriteByte(',')
			}
			c.str(p.key.Value)
			c.b.WriteByte(':')
			good = c.write(p.value, join(path, p.key.Value)) && good
		}
		c.b.WriteByte('}')
		return good
	case yaml.SequenceNode:
		c.b.WriteByte('[')
		good := true
		for i, e := range n.Content {
			if i > 0 {
				c.b.WriteByte(',')
			}
			good = c.write(e, path+"["+strconv.Itoa(i)+"]") && good
		}
		c.b.WriteByte(']')
		return good
	case yaml.ScalarNode:
		return c.scalar(n, path)
	default:
		c.d.typeErr(n, path, "a JSON value")
		return false
	}
}

func (c *jsonConverter) scalar(n *yaml.Node, path string) bool {
	switch n.ShortTag() {
	case "!!null":
		c.b.WriteString("null")
	case "!!bool":
		var v bool
		if err := n.Decode(&v); err != nil {
			c.d.typeErr(n, path, "a boolean")
			return false
		}
		c.b.WriteString(strconv.FormatBool(v))
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			c.b.WriteString(strconv.FormatInt(i, 10))
			return true
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			c.b.WriteString(strconv.FormatUint(u, 10))
			return true
		}
		c.d.ps.add(posOf(n), path, "integer %s out of range", n.Value)
		return false
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			c.d.ps.add(posOf(n), path, "%s is not a finite number, which JSON cannot hold", n.Value)
			return false
		}
		c.b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	case "!!timestamp":
		c.str(n.Value)
	case "!!str":
		s := n.Value
		if c.expand {
			var err error
			if s, _, err = expandVars(s, c.d.env); err != nil {
				c.d.ps.add(posOf(n), path, "%v", err)
				return false
			}
		}
		c.str(s)
	default:
		c.d.typeErr(n, path, "a JSON value")
		return false
	}
	return true
}

func (c *jsonConverter) str(s string) {
	enc := json.NewEncoder(&c.b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // encoding a string into a bytes.Buffer cannot fail
	c.b.Truncate(c.b.Len() - 1) // Encode ends with a newline
}

package scripted

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentrun/agentrun/protocol"
)

// toJSON appends the compact JSON form of YAML node n to buf, keeping the key order
// of mappings and leaving <, > and & unescaped. field is the path of n; p.path holds
// the segments below it, which errors append.
func (p *parser) toJSON(buf []byte, n *yaml.Node, field string) ([]byte, error) {
	p.budget--
	if p.budget < 0 {
		return nil, p.errf(n, p.at(field), "%v", errBudget)
	}
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		buf = append(buf, '{')
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := deref(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				return nil, p.errf(k, p.at(field), "a JSON object key must be a scalar, got %s", kindName(k))
			}
			if seen[k.Value] {
				return nil, p.errf(k, p.at(field)+"."+k.Value, "duplicate key")
			}
			seen[k.Value] = true
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = protocol.AppendJSONString(buf, k.Value)
			buf = append(buf, ':')
			var err error
			p.path = append(p.path, pathSeg{key: k.Value})
			if buf, err = p.toJSON(buf, n.Content[i+1], field); err != nil {
				return nil, err
			}
			p.path = p.path[:len(p.path)-1]
		}
		return append(buf, '}'), nil
	case yaml.SequenceNode:
		buf = append(buf, '[')
		for i, c := range n.Content {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			p.path = append(p.path, pathSeg{index: i, isIndex: true})
			if buf, err = p.toJSON(buf, c, field); err != nil {
				return nil, err
			}
			p.path = p.path[:len(p.path)-1]
		}
		return append(buf, ']'), nil
	case yaml.ScalarNode:
		return p.scalarJSON(buf, n, field)
	default:
		// deref resolved the aliases; a document node is not a value
	}
	return nil, p.errf(n, p.at(field), "cannot convert %s to JSON", kindName(n))
}

func (p *parser) scalarJSON(buf []byte, n *yaml.Node, field string) ([]byte, error) {
	tag := n.ShortTag()
	if (tag == "!!int" || tag == "!!float") && isJSONNumber(n.Value) {
		return append(buf, n.Value...), nil // keeps big and precise numbers exact
	}
	switch tag {
	case "!!null":
		return append(buf, "null"...), nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, p.errf(n, p.at(field), "invalid boolean %q", n.Value)
		}
		return strconv.AppendBool(buf, b), nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return strconv.AppendInt(buf, i, 10), nil
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			return strconv.AppendUint(buf, u, 10), nil
		}
		return nil, p.errf(n, p.at(field), "integer %q out of range", n.Value)
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, p.errf(n, p.at(field), "number %q has no JSON form", n.Value)
		}
		b, err := json.Marshal(f)
		if err != nil {
			return nil, p.errf(n, p.at(field), "number %q has no JSON form", n.Value)
		}
		return append(buf, b...), nil
	}
	return protocol.AppendJSONString(buf, n.Value), nil
}

// pathSeg is one step of a tool-input path: a key, or an index of a list.
type pathSeg struct {
	key     string
	index   int
	isIndex bool
}

// at is the path of the node being converted, below field.
func (p *parser) at(field string) string {
	var b strings.Builder
	b.WriteString(field)
	for _, s := range p.path {
		if s.isIndex {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		} else {
			b.WriteString("." + s.key)
		}
	}
	return b.String()
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}

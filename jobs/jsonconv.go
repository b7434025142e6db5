package jobs

import (
	"errors"

	"go.yaml.in/yaml/v3"

	"github.com/agentrun/agentrun/yamljson"
)

// Limits of an output_schema, checked while it is converted, before the JSON Schema
// compiler (whose work grows with the square of the depth) sees it.
const (
	// MaxOutputSchemaDepth is how deep mappings and sequences may nest in an output_schema.
	MaxOutputSchemaDepth = 64
	// MaxOutputSchemaBytes is the largest output_schema, as compact JSON.
	MaxOutputSchemaBytes = 128 << 10
)

// errReported is what the converter's hooks return for a problem the decoder has
// reported already.
var errReported = errors.New("reported")

// toJSON returns the JSON of n (yamljson.Append), or false after reporting why it has
// none. Aliases and merge keys resolve as everywhere in the spec, strings have ${VAR}
// expanded when expand is set, and the limits are those of an output_schema. The
// converter stops at the first problem, so a value gets one problem at most (or those
// of its first mapping with bad keys, which pairs reports together).
func (d *decoder) toJSON(n *yaml.Node, path string, expand bool) ([]byte, bool) {
	o := yamljson.Options{
		MaxDepth: MaxOutputSchemaDepth,
		MaxBytes: MaxOutputSchemaBytes,
		Enter: func(n *yaml.Node, path string) (*yaml.Node, func(), error) {
			n, release, ok := d.enter(n, path)
			if !ok {
				return nil, nil, errReported
			}
			return n, release, nil
		},
		Pairs: func(n *yaml.Node, path string) ([]yamljson.Pair, error) {
			before := len(d.ps.list)
			pairs := d.pairs(n, path)
			if len(d.ps.list) > before {
				return nil, errReported
			}
			return pairs, nil
		},
	}
	if expand {
		o.String = func(n *yaml.Node, _ string) (string, error) {
			s, _, err := expandVars(n.Value, d.env)
			return s, err
		}
	}
	b, err := yamljson.Append(nil, n, path, o)
	if err != nil {
		if e, ok := errors.AsType[*yamljson.Error](err); ok && !errors.Is(err, errReported) {
			d.ps.add(posOf(e.Node), e.Path, "%s", e.Msg)
		}
		return nil, false
	}
	return b, true
}

package jobs

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentrun/agentrun/yamljson"
)

// maxVisits bounds the nodes one Parse visits, aliases counted each time they are
// used, so that a small file cannot expand into a huge document.
const maxVisits = 1_000_000

var (
	durationType   = reflect.TypeFor[time.Duration]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	settingsType   = reflect.TypeFor[Settings]()
	specType       = reflect.TypeFor[Spec]()
	jobType        = reflect.TypeFor[Job]()
)

// extensionPrefix starts the top-level keys that the parser ignores, a place for
// anchors that jobs merge ("x-common: &common {...}").
const extensionPrefix = "x-"

// decoder turns a YAML node tree into Go values, checking as it goes and recording
// every problem and the position of every value it sets.
type decoder struct {
	ps     *problems
	env    func(string) (string, bool)
	pos    map[string]position
	fields map[reflect.Type][]field
	res    map[string]*regexp.Regexp
	active map[*yaml.Node]bool // alias targets being expanded, to stop cycles
	visits int
}

func newDecoder(ps *problems, env func(string) (string, bool), pos map[string]position) *decoder {
	return &decoder{
		ps: ps, env: env, pos: pos,
		fields: map[reflect.Type][]field{},
		res:    map[string]*regexp.Regexp{},
		active: map[*yaml.Node]bool{},
	}
}

func posOf(n *yaml.Node) position { return position{n.Line, n.Column} }

// join is the path of key below path, by the rule of the JSON converter's paths.
func join(path, key string) string { return yamljson.Join(path, key) }

func (d *decoder) fieldsFor(t reflect.Type) []field {
	fs, ok := d.fields[t]
	if !ok {
		fs = fieldsOf(t)
		d.fields[t] = fs
	}
	return fs
}

func (d *decoder) regexp(pattern string) *regexp.Regexp {
	re, ok := d.res[pattern]
	if !ok {
		re = regexp.MustCompile(pattern)
		d.res[pattern] = re
	}
	return re
}

// enter counts a visit and resolves an alias. It returns the node to read, a release
// function and false when the node must be skipped (budget spent, or a cyclic or
// unknown alias, which it reports).
func (d *decoder) enter(n *yaml.Node, path string) (*yaml.Node, func(), bool) {
	d.visits++
	if d.visits == maxVisits {
		d.ps.add(posOf(n), path, "document too large: more than %d values after expanding aliases", maxVisits)
	}
	if d.visits >= maxVisits {
		return nil, nil, false
	}
	if n.Kind != yaml.AliasNode {
		return n, func() {}, true
	}
	t := n.Alias
	if t == nil {
		d.ps.add(posOf(n), path, "unknown alias *%s", n.Value)
		return nil, nil, false
	}
	if d.active[t] {
		d.ps.add(posOf(n), path, "alias *%s refers to a value that contains it", n.Value)
		return nil, nil, false
	}
	d.active[t] = true
	return t, func() { delete(d.active, t) }, true
}

// decode sets v from n, recording the position of n under path.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string, o opts) {
	at := posOf(n)
	n, release, ok := d.enter(n, path)
	if !ok {
		return
	}
	defer release()
	d.pos[path] = at
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		if o.check == "path" && n.Value == "~" {
			d.ps.add(at, path, `~ alone is null in YAML: write "~" in quotes for the home directory`)
			return
		}
		d.ps.add(at, path, "no value: remove the key or give it a value")
		return
	}
	d.value(n, v, path, o)
}

func (d *decoder) value(n *yaml.Node, v reflect.Value, path string, o opts) {
	switch v.Type() {
	case durationType:
		d.duration(n, v, path, o)
		return
	case rawMessageType:
		d.rawJSON(n, v, path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		d.value(n, e.Elem(), path, o)
		v.Set(e)
	case reflect.Struct:
		d.structure(n, v, path)
	case reflect.Slice:
		d.sequence(n, v, path, o)
	case reflect.Map:
		d.mapping(n, v, path, o)
	case reflect.String:
		d.str(n, v, path, o)
	case reflect.Int, reflect.Int64:
		d.integer(n, v, path, o)
	case reflect.Float64:
		d.float(n, v, path, o)
	case reflect.Bool:
		d.boolean(n, v, path, o)
	default:
		panic(fmt.Sprintf("jobs: no decoder for %s", v.Type()))
	}
}

func (d *decoder) typeErr(n *yaml.Node, path, want string) {
	d.ps.add(posOf(n), path, "want %s, got %s", want, yamljson.Describe(n))
}

// pairs returns the entries of mapping n with YAML merge keys ("<<: *anchor") applied:
// explicit keys win over merged ones, earlier merges over later ones. It reports
// duplicate and non-scalar keys and leaves them out.
func (d *decoder) pairs(n *yaml.Node, path string) []yamljson.Pair {
	var out []yamljson.Pair
	seen := map[string]position{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, val)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.ps.add(posOf(k), path, "keys must be strings, got %s", yamljson.Describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.ps.add(posOf(k), join(path, k.Value), "duplicate key %q (first at %s)", k.Value, first)
			continue
		}
		seen[k.Value] = posOf(k)
		out = append(out, yamljson.Pair{Key: k, Value: val})
	}
	for _, m := range merges {
		d.merge(m, path, seen, &out)
	}
	return out
}

func (d *decoder) merge(m *yaml.Node, path string, seen map[string]position, out *[]yamljson.Pair) {
	m, release, ok := d.enter(m, path)
	if !ok {
		return
	}
	defer release()
	switch m.Kind {
	case yaml.MappingNode:
		for _, p := range d.pairs(m, path) {
			if _, dup := seen[p.Key.Value]; !dup {
				seen[p.Key.Value] = posOf(p.Key)
				*out = append(*out, p)
			}
		}
	case yaml.SequenceNode:
		for _, e := range m.Content {
			d.merge(e, path, seen, out)
		}
	default:
		d.typeErr(m, path, "a mapping or a list of mappings to merge (<<)")
	}
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.typeErr(n, path, "a mapping")
		return
	}
	fields := d.fieldsFor(v.Type())
	set := map[string]bool{}
	for _, p := range d.pairs(n, path) {
		key := p.Key.Value
		if v.Type() == specType && strings.HasPrefix(key, extensionPrefix) {
			continue
		}
		i := indexOf(fields, key)
		if i < 0 {
			d.unknownKey(p.Key, join(path, key), v.Type(), fields)
			continue
		}
		set[key] = true
		d.decode(p.Value, v.FieldByIndex(fields[i].index), join(path, key), fields[i].opts)
	}
	for _, f := range fields {
		if f.required && !set[f.name] {
			d.ps.add(posOf(n), join(path, f.name), "missing required key %q", f.name)
		}
	}
}

// unknownKey reports a key that t does not have, saying where it belongs when it is
// a key of another level, or which known key it resembles.
func (d *decoder) unknownKey(k *yaml.Node, path string, t reflect.Type, fields []field) {
	key := k.Value
	msg := fmt.Sprintf("unknown key %q", key)
	inSettings := indexOf(d.fieldsFor(settingsType), key) >= 0
	inJob := indexOf(d.fieldsFor(jobType), key) >= 0
	switch {
	case t == specType && inSettings:
		msg += "; settings go under defaults or in a job"
	case t == specType && inJob:
		msg += "; job keys go in an entry of jobs"
	case t == settingsType && inJob:
		msg += "; it is allowed only in a job, not in defaults"
	default:
		names := make([]string, len(fields))
		for i, f := range fields {
			names[i] = f.name
		}
		if s := Suggest(key, names); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
	}
	d.ps.add(posOf(k), path, "%s", msg)
}

func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string, o opts) {
	if n.Kind != yaml.SequenceNode {
		d.typeErr(n, path, "a list")
		return
	}
	if o.limit == "nonempty" && len(n.Content) == 0 {
		d.ps.add(posOf(n), path, "must not be empty")
	}
	o.limit = ""
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		d.decode(e, s.Index(i), fmt.Sprintf("%s[%d]", path, i), o)
	}
	v.Set(s)
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string, o opts) {
	if n.Kind != yaml.MappingNode {
		d.typeErr(n, path, "a mapping")
		return
	}
	m := reflect.MakeMap(v.Type())
	for _, p := range d.pairs(n, path) {
		key := p.Key.Value
		kpath := join(path, key)
		if msg := checkKey(o.keys, key); msg != "" {
			d.ps.add(posOf(p.Key), kpath, "%s", msg)
			continue
		}
		e := reflect.New(v.Type().Elem()).Elem()
		d.decode(p.Value, e, kpath, o)
		m.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), e)
	}
	v.Set(m)
}

// checkKey returns why key breaks the rule, or "".
func checkKey(rule, key string) string {
	switch rule {
	case "envname":
		if !validVarName(key) {
			return fmt.Sprintf("%q is not an environment variable name (letters, digits and '_', not starting with a digit)", key)
		}
	case "matrix":
		if !validMatrixName(key) {
			return fmt.Sprintf("matrix name %q: use letters, digits and '_', not starting with a digit, or a nested setting such as thinking.effort", key)
		}
	case "mcpname":
		return checkMCPName(key)
	case "header":
		return checkHeaderName(key)
	}
	if key == "" {
		return "empty key"
	}
	return ""
}

func (d *decoder) rawJSON(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.typeErr(n, path, "a mapping (a JSON Schema object)")
		return
	}
	b, ok := d.toJSON(n, path, true)
	if !ok {
		return
	}
	v.SetBytes(b)
}

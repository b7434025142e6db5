package jobs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

// Patterns the schema uses where the parser checks in code.
const (
	// durationPattern matches the Go duration strings time.ParseDuration accepts,
	// without a sign other than "+".
	durationPattern = `^\+?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`
	// varPattern matches strings that use ${VAR}; numeric, duration and enumerated
	// fields accept them and check the expanded text.
	varPattern        = `\$\{`
	envNamePattern    = `^[A-Za-z_][A-Za-z0-9_]*$`
	matrixNamePattern = `^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`
	// pathPattern is a looser form of checkPath: not empty, no NUL, no ~user.
	pathPattern = `^(~|~/[^\x00]*|[^~\x00][^\x00]*)$`
	// hostPattern is a looser form of checkHost: a host name, "*.domain" or
	// ".domain", or something made of the characters of an IPv6 address.
	hostPattern = `^((\*\.|\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*)$`
)

// SchemaID is the $id of the job spec schema. The schema is also committed as
// jobs/jobs.schema.json, which the examples name in their yaml-language-server modeline.
const SchemaID = "https://github.com/agentrun/agentrun/schema/jobs/v1.json"

// Schema returns the JSON Schema (draft 2020-12) of job spec files, generated from the
// Go types: keys from their yaml tags, descriptions from their doc tags, every object
// closed with additionalProperties false. Editors use it to complete and check specs;
// it accepts every spec Parse accepts, while Parse also checks what a schema cannot
// (files, templates, unique ids, matrix values against the settings they override).
func Schema() []byte {
	root := schemaOf(specType, opts{})
	root.prepend("title", "agentrun job spec")
	root.prepend("$id", SchemaID)
	root.prepend("$schema", "https://json-schema.org/draft/2020-12/schema")
	root.set("description", "Jobs for agentrun run: defaults every job inherits, and the jobs, each of which expands into sessions by matrix and repeat.")
	root.set("patternProperties", newObj().set("^"+extensionPrefix, newObj().set("description", "Ignored; a place for YAML anchors.")))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		panic("jobs: encode schema: " + err.Error()) // only strings, numbers and objects: cannot fail
	}
	return b.Bytes()
}

// schemaOf returns the schema of values of type t with the constraints o.
func schemaOf(t reflect.Type, o opts) *obj {
	switch t {
	case durationType:
		return orVar(newObj().set("type", "string").set("pattern", durationPattern))
	case rawMessageType:
		return newObj().set("type", "object")
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem(), o)
	case reflect.Struct:
		return structSchema(t)
	case reflect.Slice:
		s := newObj().set("type", "array")
		if o.limit == "nonempty" {
			s.set("minItems", 1)
		}
		if t.Elem() == reflect.TypeFor[Tool]() {
			s.set("uniqueItems", true) // the parser rejects repeated tools
		}
		o.limit = ""
		return s.set("items", schemaOf(t.Elem(), o))
	case reflect.Map:
		names := newObj().set("minLength", 1)
		switch o.keys {
		case "envname":
			names.set("pattern", envNamePattern)
		case "matrix":
			names.set("pattern", matrixNamePattern)
		}
		return newObj().set("type", "object").set("propertyNames", names).
			set("additionalProperties", schemaOf(t.Elem(), o))
	case reflect.String:
		return stringSchema(t, o)
	case reflect.Int, reflect.Int64:
		s := newObj().set("type", "integer")
		switch o.limit {
		case "positive":
			s.set("minimum", 1)
		case "nonneg":
			s.set("minimum", 0)
		}
		return orVar(s)
	case reflect.Bool:
		return orVar(newObj().set("type", "boolean"))
	case reflect.Float64:
		s := newObj().set("type", "number")
		switch o.limit {
		case "positive":
			s.set("exclusiveMinimum", 0)
		case "nonneg":
			s.set("minimum", 0)
		}
		return orVar(s)
	}
	panic("jobs: no schema for " + t.String())
}

func stringSchema(t reflect.Type, o opts) *obj {
	if e, ok := reflect.Zero(t).Interface().(enum); ok {
		return orVar(newObj().set("enum", e.values()))
	}
	s := newObj().set("type", "string")
	if o.anyScalar {
		s.set("type", []string{"string", "number", "boolean"})
	}
	if o.limit == "nonempty" {
		s.set("minLength", 1)
	}
	switch {
	case o.pattern != "":
		return orVar(s.set("pattern", o.pattern))
	case o.check == "path":
		return orVar(s.set("pattern", pathPattern))
	case o.check == "host":
		return orVar(s.set("pattern", hostPattern))
	}
	return s
}

// orVar lets a constrained scalar also be a string that uses ${VAR}.
func orVar(s *obj) *obj {
	return newObj().set("anyOf", []any{s, newObj().set("type", "string").set("pattern", varPattern)})
}

func structSchema(t reflect.Type) *obj {
	props := newObj()
	var required []string
	for _, f := range fieldsOf(t) {
		p := schemaOf(t.FieldByIndex(f.index).Type, f.opts)
		if c := t.FieldByIndex(f.index).Tag.Get("const"); c != "" {
			n, _ := strconv.Atoi(c)
			p = orVar(newObj().set("const", n))
		}
		if f.doc != "" {
			p.prepend("description", f.doc)
		}
		props.set(f.name, p)
		if f.required {
			required = append(required, f.name)
		}
	}
	s := newObj().set("type", "object").set("properties", props)
	if required != nil {
		s.set("required", required)
	}
	if t == jobType {
		s.set("oneOf", []any{
			newObj().set("required", []string{"prompt"}),
			newObj().set("required", []string{"prompt_file"}),
		})
	}
	return s.set("additionalProperties", false)
}

// obj is a JSON object that keeps its keys in insertion order.
type obj struct {
	keys []string
	vals map[string]any
}

func newObj() *obj { return &obj{vals: map[string]any{}} }

func (o *obj) set(k string, v any) *obj {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

func (o *obj) prepend(k string, v any) *obj {
	if _, ok := o.vals[k]; !ok {
		o.keys = append([]string{k}, o.keys...)
	}
	o.vals[k] = v
	return o
}

// MarshalJSON writes the object with its keys in order.
func (o *obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

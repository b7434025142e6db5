package jobs

import (
	"reflect"
	"strings"
)

// opts are the constraints a struct tag puts on a field's values.
type opts struct {
	limit     string // "positive", "nonneg" or "nonempty"
	pattern   string // regular expression every string value must match
	want      string // what the pattern means, for messages
	anyScalar bool   // strings accept any scalar, written as text (env values, matrix values)
	keys      string // rule for map keys: "envname" or "matrix"
	check     string // rule checked in code for every string value: "path", "host", "url" or "toolpattern"
	late      bool   // ${VAR} is checked while parsing but kept as written, for the runner to read (secrets)
}

// field is one YAML key of a struct type.
type field struct {
	name     string
	index    []int
	required bool
	doc      string
	opts     opts
}

// fieldsOf lists the YAML keys of struct type t in declaration order, descending into
// fields tagged ",inline".
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("yaml")
		if !ok || !sf.IsExported() {
			continue
		}
		name, flags, _ := strings.Cut(tag, ",")
		if flags == "inline" {
			for _, f := range fieldsOf(sf.Type) {
				f.index = append([]int{i}, f.index...)
				out = append(out, f)
			}
			continue
		}
		out = append(out, field{
			name:     name,
			index:    []int{i},
			required: sf.Tag.Get("required") == "true",
			doc:      sf.Tag.Get("doc"),
			opts: opts{
				limit:     sf.Tag.Get("limit"),
				pattern:   sf.Tag.Get("pattern"),
				want:      patternWant(sf.Tag.Get("pattern")),
				anyScalar: sf.Tag.Get("scalars") == "any",
				keys:      sf.Tag.Get("keys"),
				check:     sf.Tag.Get("check"),
				late:      sf.Tag.Get("vars") == "late",
			},
		})
	}
	return out
}

// patternWant explains a pattern used in a struct tag, for messages.
func patternWant(pattern string) string {
	switch pattern {
	case "^[A-Za-z0-9][A-Za-z0-9._-]*$":
		return "letters, digits, '.', '_' and '-', starting with a letter or digit"
	case "^[0-7]{4}$":
		return `four octal digits such as "0467"`
	case "^[A-Za-z_][A-Za-z0-9_]*$":
		return "an environment variable name (letters, digits and '_', not starting with a digit)"
	}
	return "a match of " + pattern
}

func indexOf(fields []field, name string) int {
	for i, f := range fields {
		if f.name == name {
			return i
		}
	}
	return -1
}

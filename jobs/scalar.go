package jobs

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

var errNotFinite = errors.New("not a finite number")

func parseInt(s string) (int64, error) { return strconv.ParseInt(strings.TrimSpace(s), 10, 64) }

func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return 0, errNotFinite
	}
	return f, err
}

func checkFloat(f float64, limit string) string {
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return "must be a finite number"
	case limit == "positive" && f <= 0:
		return fmt.Sprintf("must be greater than 0, got %g", f)
	case limit == "nonneg" && f < 0:
		return fmt.Sprintf("must not be negative, got %g", f)
	}
	return ""
}

// parseDuration parses a Go duration string. On failure it returns a message that may
// hold valueMark.
func parseDuration(s, limit string) (time.Duration, string) {
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, ferr := strconv.ParseFloat(s, 64); ferr == nil {
			return 0, valueMark + ` has no unit: add one, such as "30s" or "30m"`
		}
		return 0, "invalid duration " + valueMark + `: use Go duration syntax such as "90s", "30m" or "1h30m"`
	}
	if limit == "positive" && d <= 0 {
		return 0, "duration must be positive, got " + valueMark
	}
	return d, ""
}

// setText sets v (a settings field: a pointer to a string, enum, integer, number,
// boolean or duration) from the text s, as a matrix value does. It returns why s does not fit,
// as a message that may hold valueMark, or "".
func (d *decoder) setText(v reflect.Value, s string, o opts) string {
	if v.Type() == durationType {
		dur, msg := parseDuration(s, o.limit)
		if msg == "" {
			v.SetInt(int64(dur))
		}
		return msg
	}
	switch v.Kind() {
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		if msg := d.setText(e.Elem(), s, o); msg != "" {
			return msg
		}
		v.Set(e)
	case reflect.String:
		if msg := d.checkString(v.Type(), s, o); msg != "" {
			return msg
		}
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		i, err := parseInt(s)
		if err != nil || v.OverflowInt(i) {
			return valueMark + " is not an integer"
		}
		if msg := checkInt(i, o.limit); msg != "" {
			return msg
		}
		v.SetInt(i)
	case reflect.Float64:
		f, err := parseFloat(s)
		if err != nil {
			return valueMark + " is not a number"
		}
		if msg := checkFloat(f, o.limit); msg != "" {
			return msg
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, ok := parseBool(s)
		if !ok {
			return valueMark + " is not true or false"
		}
		v.SetBool(b)
	default:
		return "not a scalar setting"
	}
	return ""
}

// plainScalar reports whether tag is one of a plain value, which a string with
// scalars:"any" accepts.
func plainScalar(tag string) bool {
	switch tag {
	case "!!str", "!!int", "!!float", "!!bool", "!!timestamp":
		return true
	}
	return false
}

// text returns the string value of scalar n with ${VAR} expanded, and whether a
// variable was substituted; it reports and returns false when n is not a string (or,
// with anyScalar, not a scalar).
func (d *decoder) text(n *yaml.Node, path string, o opts) (string, bool, bool) {
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!str" && (!o.anyScalar || !plainScalar(tag))) {
		switch {
		case o.anyScalar:
			d.typeErr(n, path, "a string, number or boolean")
		case o.pattern != "" && n.Kind == yaml.ScalarNode:
			// bash_mode: 0467 unquoted is the octal number 311 to a YAML 1.1 reader.
			d.typeErr(n, path, "a quoted string of "+o.want)
		default:
			d.typeErr(n, path, "a string")
		}
		return "", false, false
	}
	if tag == "!!float" {
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			d.ps.add(posOf(n), path, "%s is not a finite number", n.Value)
			return "", false, false
		}
	}
	if tag != "!!str" {
		return n.Value, false, true
	}
	s, substituted, err := expandVars(n.Value, d.env)
	if err != nil {
		d.ps.add(posOf(n), path, "%v", err)
		return "", false, false
	}
	return s, substituted, true
}

func (d *decoder) str(n *yaml.Node, v reflect.Value, path string, o opts) {
	s, substituted, ok := d.text(n, path, o)
	if !ok {
		return
	}
	if msg := d.checkString(v.Type(), s, o); msg != "" {
		d.ps.add(posOf(n), path, "%s", shown(msg, s, n.Value, substituted))
		return
	}
	if o.late && n.ShortTag() == "!!str" {
		s = n.Value // expanded again where it is used, so that no secret is kept here
	}
	v.SetString(s)
}

// boolean sets v from a YAML boolean, or a string that uses ${VAR} and expands to
// true or false.
func (d *decoder) boolean(n *yaml.Node, v reflect.Value, path string, o opts) {
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			d.ps.add(posOf(n), path, "invalid boolean %s", n.Value)
			return
		}
		v.SetBool(b)
	case isVarString(n):
		s, _, ok := d.text(n, path, o)
		if !ok {
			return
		}
		switch strings.TrimSpace(s) {
		case "true":
			v.SetBool(true)
		case "false":
			v.SetBool(false)
		default:
			d.ps.add(posOf(n), path, "%q does not expand to true or false", n.Value)
		}
	default:
		d.typeErr(n, path, "true or false")
	}
}

// valueMark stands for the offending value in the messages of checkString and
// parseDuration; shown replaces it.
const valueMark = "{value}"

// shown fills msg's valueMark with the quoted value or, when the value came from the
// environment, with "value" and the text as written, so that no secret reaches a message.
func shown(msg, value, written string, substituted bool) string {
	if substituted {
		return strings.Replace(msg, valueMark, "value", 1) + fmt.Sprintf(" (from %q)", written)
	}
	return strings.Replace(msg, valueMark, strconv.Quote(value), 1)
}

// checkString returns why s is not allowed in a field of type t with constraints o
// (a message that may hold valueMark), or "".
func (d *decoder) checkString(t reflect.Type, s string, o opts) string {
	if e, ok := reflect.Zero(t).Interface().(enum); ok {
		vals := e.values()
		for _, v := range vals {
			if s == v {
				return ""
			}
		}
		msg := "unknown " + e.what() + " " + valueMark
		if sg := Suggest(s, vals); sg != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sg)
		}
		return msg + "; want one of " + strings.Join(vals, ", ")
	}
	if o.limit == "nonempty" && s == "" {
		return "must not be empty"
	}
	if o.pattern != "" && !d.regexp(o.pattern).MatchString(s) {
		return "invalid value " + valueMark + ": want " + o.want
	}
	switch o.check {
	case "path":
		return checkPath(s)
	case "host":
		return checkHost(s)
	case "url":
		return checkURL(s)
	case "toolpattern":
		return checkToolPattern(s)
	}
	return ""
}

func (d *decoder) integer(n *yaml.Node, v reflect.Value, path string, o opts) {
	var i int64
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int":
		if err := n.Decode(&i); err != nil || v.OverflowInt(i) {
			d.ps.add(posOf(n), path, "integer %s out of range", n.Value)
			return
		}
	case isVarString(n):
		s, _, ok := d.text(n, path, o)
		if !ok {
			return
		}
		var err error
		if i, err = parseInt(s); err != nil || v.OverflowInt(i) {
			d.ps.add(posOf(n), path, "%q does not expand to an integer", n.Value)
			return
		}
	default:
		d.typeErr(n, path, "an integer")
		return
	}
	if msg := checkInt(i, o.limit); msg != "" {
		d.ps.add(posOf(n), path, "%s", msg)
		return
	}
	v.SetInt(i)
}

// parseBool reads the text of a boolean: true or false, as YAML 1.2 writes them.
func parseBool(s string) (value, ok bool) {
	switch strings.TrimSpace(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func checkInt(i int64, limit string) string {
	switch {
	case limit == "positive" && i < 1:
		return fmt.Sprintf("must be at least 1, got %d", i)
	case limit == "nonneg" && i < 0:
		return fmt.Sprintf("must not be negative, got %d", i)
	}
	return ""
}

func (d *decoder) float(n *yaml.Node, v reflect.Value, path string, o opts) {
	var f float64
	switch {
	case n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float"):
		if err := n.Decode(&f); err != nil {
			d.ps.add(posOf(n), path, "invalid number %s", n.Value)
			return
		}
	case isVarString(n):
		s, _, ok := d.text(n, path, o)
		if !ok {
			return
		}
		var err error
		if f, err = parseFloat(s); err != nil {
			d.ps.add(posOf(n), path, "%q does not expand to a number", n.Value)
			return
		}
	default:
		d.typeErr(n, path, "a number")
		return
	}
	if msg := checkFloat(f, o.limit); msg != "" {
		d.ps.add(posOf(n), path, "%s", msg)
		return
	}
	v.SetFloat(f)
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string, o opts) {
	if n.Kind != yaml.ScalarNode {
		d.typeErr(n, path, `a duration such as "30m"`)
		return
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		d.ps.add(posOf(n), path, "%s has no unit: add one, such as \"%ss\" or \"%sm\"", n.Value, n.Value, n.Value)
		return
	case "!!str":
	default:
		d.typeErr(n, path, `a duration such as "30m"`)
		return
	}
	s, substituted, ok := d.text(n, path, o)
	if !ok {
		return
	}
	dur, msg := parseDuration(s, o.limit)
	if msg != "" {
		d.ps.add(posOf(n), path, "%s", shown(msg, s, n.Value, substituted))
		return
	}
	v.SetInt(int64(dur))
}

// isVarString reports whether n is a string that uses ${VAR}, which numeric fields
// accept and convert after expansion.
func isVarString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && strings.Contains(n.Value, "${")
}

package jobs

import (
	"fmt"
	"strings"
)

// maxDefaultNesting is how deep ${A:-${B:-...}} defaults may nest.
const maxDefaultNesting = 8

// expandVars replaces ${NAME} and ${NAME:-default} in s with values from lookup;
// $$ stands for one dollar sign and any other $ is kept as it is. The default applies
// when NAME is unset or empty, and is itself expanded, so defaults nest
// (${A:-${B:-x}}, up to maxDefaultNesting deep). It reports whether a variable was
// substituted, so callers can avoid quoting values that came from the environment.
func expandVars(s string, lookup func(string) (string, bool)) (string, bool, error) {
	return expandNested(s, lookup, 0)
}

func expandNested(s string, lookup func(string) (string, bool), level int) (string, bool, error) {
	if !strings.Contains(s, "$") {
		return s, false, nil
	}
	var b strings.Builder
	substituted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := closingBrace(s[i+2:])
			if end < 0 {
				return "", false, fmt.Errorf("unterminated ${ at byte %d (write $$ for a literal dollar sign)", i)
			}
			ref := s[i+2 : i+2+end]
			name, def, hasDef := strings.Cut(ref, ":-")
			if !validVarName(name) {
				return "", false, fmt.Errorf("invalid variable reference ${%s}: want ${NAME} or ${NAME:-default} (write $$ for a literal dollar sign)", ref)
			}
			v, ok := "", false
			if lookup != nil {
				v, ok = lookup(name)
			}
			switch {
			case ok && v != "":
			case hasDef:
				if strings.Contains(def, "${") && level+1 >= maxDefaultNesting {
					return "", false, fmt.Errorf("defaults nested more than %d deep in ${%s}", maxDefaultNesting, ref)
				}
				var err error
				if v, _, err = expandNested(def, lookup, level+1); err != nil {
					return "", false, err
				}
			case !ok:
				return "", false, fmt.Errorf("undefined variable ${%s} (give a default with ${%s:-value})", name, name)
			}
			b.WriteString(v)
			substituted = true
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), substituted, nil
}

// closingBrace returns the index in s of the } that closes a ${ just before s,
// skipping the ${...} nested in it and $$; -1 when there is none.
func closingBrace(s string) int {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '$' && i+1 < len(s) && (s[i+1] == '$' || s[i+1] == '{'):
			if s[i+1] == '{' {
				depth++
			}
			i++
		case s[i] == '}':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// validVarName reports whether s is an environment variable name: a letter or
// underscore, then letters, digits and underscores.
func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

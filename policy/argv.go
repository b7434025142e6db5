package policy

import (
	"slices"
	"strings"
)

// opt is one command-line option, with its value when it takes one.
type opt struct {
	name     string
	value    token
	hasValue bool
}

// walkArgs splits arguments into options and operands. shortValued lists the
// single-letter options that take a value (attached, as in -ofile, or the next
// word); longValued the --options that take the next word (--opt=value always
// works). "--" ends the options. With stopAtOperand, the first operand ends the scan
// and everything from it on is returned as operands (the command a prefix such as
// sudo runs).
func walkArgs(args []token, shortValued string, longValued []string, stopAtOperand bool) ([]opt, []token) {
	var opts []opt
	var ops []token
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case t == "--":
			return opts, append(ops, args[i+1:]...)
		case strings.HasPrefix(t, "--"):
			name, val, ok := strings.Cut(t, "=")
			o := opt{name: name}
			switch {
			case ok:
				o.value, o.hasValue = token{kind: tokWord, text: val, subs: a.subs}, true
			case slices.Contains(longValued, name) && i+1 < len(args):
				i++
				o.value, o.hasValue = args[i], true
			}
			opts = append(opts, o)
		case len(t) > 1 && t[0] == '-':
			for j := 1; j < len(t); j++ {
				o := opt{name: "-" + t[j:j+1]}
				if strings.IndexByte(shortValued, t[j]) >= 0 {
					switch {
					case j+1 < len(t):
						o.value, o.hasValue = token{kind: tokWord, text: t[j+1:], subs: a.subs}, true
					case i+1 < len(args):
						i++
						o.value, o.hasValue = args[i], true
					}
					opts = append(opts, o)
					break
				}
				opts = append(opts, o)
			}
		default:
			if stopAtOperand {
				return opts, append(ops, args[i:]...)
			}
			ops = append(ops, a)
		}
	}
	return opts, ops
}

func hasOpt(opts []opt, names ...string) bool {
	for _, o := range opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

func hasWord(args []token, words ...string) bool {
	for _, a := range args {
		if slices.Contains(words, a.text) {
			return true
		}
	}
	return false
}

// word makes a synthetic word token.
func word(text string) token { return token{kind: tokWord, text: text} }

// operands scopes every operand, and every --opt=value, as a path with perm.
func (x *cmdCtx) operands(args []token, perm Access) {
	opts, ops := walkArgs(args, "", nil, false)
	for _, o := range opts {
		if o.hasValue {
			x.c.path(x.v, o.value, perm)
		}
	}
	for _, w := range ops {
		x.c.path(x.v, w, perm)
	}
}

// writeOperands scopes operands as files that are read and written; a write-like
// command without operands writes in the current directory.
func (x *cmdCtx) writeOperands(ops []token) {
	if len(ops) == 0 {
		x.c.path(x.v, word("."), WorkspaceWrite)
		return
	}
	for _, w := range ops {
		x.c.path(x.v, w, rw)
	}
}

// optPaths scopes the values of the named options as paths with perm.
func (x *cmdCtx) optPaths(opts []opt, perm Access, names ...string) {
	for _, o := range opts {
		if o.hasValue && slices.Contains(names, o.name) {
			x.c.path(x.v, o.value, perm)
		}
	}
}

// writeValued lists the short options of write-like commands that take a value.
func writeValued(name string) string {
	switch name {
	case "tar":
		return "fCbHKLNTVgX"
	case "unzip":
		return "dx"
	case "zip":
		return "bt"
	case "mkdir", "mknod", "mkfifo":
		return "m"
	case "touch":
		return "dtr"
	case "truncate":
		return "sr"
	case "split":
		return "abdlnC"
	case "mv":
		return "tS"
	}
	return ""
}

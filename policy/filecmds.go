package policy

import (
	"slices"
	"strings"
)

// dd: if= is read, of= is written.
func (x *cmdCtx) dd(args []token) {
	for _, a := range args {
		switch {
		case strings.HasPrefix(a.text, "if="):
			x.c.path(x.v, word(a.text[3:]), WorkspaceRead)
		case strings.HasPrefix(a.text, "of="):
			x.c.path(x.v, word(a.text[3:]), WorkspaceWrite)
		}
	}
}

// rm: operands are written; a recursive delete of / is called out.
func (x *cmdCtx) rm(args []token) {
	opts, ops := walkArgs(args, "", nil, false)
	recursive := hasOpt(opts, "-r", "-R", "--recursive")
	if hasOpt(opts, "--no-preserve-root") {
		x.v.add(SystemWrite, "rm --no-preserve-root deletes the whole file system")
	}
	for _, w := range ops {
		if recursive && strings.HasPrefix(w.text, "/") && strings.Trim(w.text, "/*.") == "" {
			x.v.add(SystemWrite, "rm -r "+w.text+" deletes the whole file system")
		}
	}
	x.writeOperands(ops)
}

// find: starting points are read, or written with -delete; -exec runs commands.
func (x *cmdCtx) find(args []token) {
	i := 0
	for i < len(args) && slices.Contains([]string{"-H", "-L", "-P"}, args[i].text) {
		i++
	}
	start := i
	for i < len(args) && !isFindExpr(args[i].text) {
		i++
	}
	starts, expr := args[start:i], args[i:]
	perm := WorkspaceRead
	for k := 0; k < len(expr); k++ {
		switch t := expr[k].text; t {
		case "-delete":
			perm = rw
		case "-exec", "-execdir", "-ok", "-okdir":
			x.v.add(WorkspaceExecute, "find "+t+" runs commands")
			var parts []string
			for k++; k < len(expr) && expr[k].text != ";" && expr[k].text != "+"; k++ {
				parts = append(parts, expr[k].text)
			}
			x.c.nested(x.v, strings.Join(parts, " "))
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if k+1 < len(expr) {
				k++
				x.c.path(x.v, expr[k], WorkspaceWrite)
			}
		case "-newer", "-anewer", "-cnewer", "-samefile":
			if k+1 < len(expr) {
				k++
				x.c.path(x.v, expr[k], WorkspaceRead)
			}
		}
	}
	if len(starts) == 0 {
		starts = []token{word(".")}
	}
	for _, s := range starts {
		x.c.path(x.v, s, perm)
	}
}

func isFindExpr(t string) bool {
	return strings.HasPrefix(t, "-") || t == "(" || t == "!" || t == ")" || t == ","
}

// sed: the script is not a path; files are written with -i.
func (x *cmdCtx) sed(args []token) {
	opts, ops := walkArgs(args, "efl", []string{"--expression", "--file", "--line-length"}, false)
	x.optPaths(opts, WorkspaceRead, "-f", "--file")
	if !hasOpt(opts, "-e", "--expression", "-f", "--file") && len(ops) > 0 {
		ops = ops[1:]
	}
	perm := WorkspaceRead
	if hasOpt(opts, "-i", "--in-place") {
		perm = rw
	}
	for _, w := range ops {
		x.c.path(x.v, w, perm)
	}
}

// patternValued lists, per search command, its short and long options with values.
var patternValued = map[string]struct {
	short string
	long  []string
}{
	"grep": {"efmABCdD", []string{"--regexp", "--file", "--max-count", "--after-context", "--before-context", "--context", "--include", "--exclude", "--exclude-dir", "--label", "--devices", "--directories"}},
	"rg":   {"efgtTmABCMjEr", []string{"--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-count", "--after-context", "--before-context", "--context", "--max-columns", "--threads", "--encoding", "--replace", "--pre", "--sort", "--sortr"}},
	"ag":   {"GgmABC", []string{"--file-search-regex", "--max-count", "--after", "--before", "--context", "--ignore"}},
	"ack":  {"gmABC", []string{"--match", "--max-count", "--after-context", "--before-context", "--context", "--type", "--ignore-dir"}},
	"awk":  {"fvF", []string{"--file", "--assign", "--field-separator"}},
	"jq":   {"fL", []string{"--from-file", "--arg", "--argjson", "--slurpfile", "--rawfile", "--indent", "--args"}},
	"yq":   {"IoPpf", []string{"--indent", "--output-format", "--input-format", "--from-file"}},
}

// pattern: grep, rg, awk, jq … take a pattern or program first, then files.
func (x *cmdCtx) pattern(name string, args []token) {
	key := name
	switch name {
	case "egrep", "fgrep":
		key = "grep"
	case "gawk", "mawk", "nawk":
		key = "awk"
	case "gojq":
		key = "jq"
	}
	pv := patternValued[key]
	opts, ops := walkArgs(args, pv.short, pv.long, false)
	x.optPaths(opts, WorkspaceRead, "-f", "--file", "--from-file", "--slurpfile", "--rawfile")
	for _, o := range opts {
		if o.name == "--pre" && o.hasValue {
			x.v.add(WorkspaceExecute, "rg --pre runs a command")
			x.c.nested(x.v, o.value.text)
		}
	}
	if !hasOpt(opts, "-e", "--regexp", "-f", "--file", "--from-file") && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, w := range ops {
		x.c.path(x.v, w, WorkspaceRead)
	}
}

// copyLike: cp, ln, install, scp and rsync read their sources and write the last
// operand (or the -t directory).
func (x *cmdCtx) copyLike(args []token, valued string) {
	opts, ops := walkArgs(args, valued, []string{"--target-directory", "--suffix", "--rsh", "--exclude", "--include", "--filter"}, false)
	x.optPaths(opts, WorkspaceRead, "-i", "-F")
	if hasOpt(opts, "-t", "--target-directory") {
		x.optPaths(opts, rw, "-t", "--target-directory")
		for _, w := range ops {
			x.c.path(x.v, w, WorkspaceRead)
		}
		return
	}
	for i, w := range ops {
		perm := WorkspaceRead
		if i == len(ops)-1 && len(ops) > 1 {
			perm = rw
		}
		x.c.path(x.v, w, perm)
	}
}

package policy

// simple is one simple command: its words and redirections.
type simple struct {
	words   []token
	redirs  []redirect
	funcDef bool // "name ( )": a function definition follows
}

// redirect is one redirection; target is the word after it (for here-documents the
// delimiter, with the body in tok).
type redirect struct {
	tok       token
	target    token
	hasTarget bool
}

// pipeline is simple commands joined by | or |&. A pipeline with a mark, "(" or
// ")", holds no commands: it marks where a subshell starts or ends.
type pipeline struct {
	cmds []simple
	mark string
}

// parse groups tokens into pipelines. Lists (; & && || newline) separate them, and
// subshell parentheses are marked.
func parse(toks []token) []pipeline {
	var out []pipeline
	var cur []simple
	var sc simple
	endCmd := func() {
		if len(sc.words) > 0 || len(sc.redirs) > 0 || sc.funcDef {
			cur = append(cur, sc)
		}
		sc = simple{}
	}
	endPipe := func() {
		endCmd()
		if len(cur) > 0 {
			out = append(out, pipeline{cmds: cur})
		}
		cur = nil
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case tokWord:
			sc.words = append(sc.words, t)
		case tokRedir:
			r := redirect{tok: t}
			if i+1 < len(toks) && toks[i+1].kind == tokWord {
				r.target, r.hasTarget = toks[i+1], true
				i++
			}
			sc.redirs = append(sc.redirs, r)
		case tokOp:
			switch {
			case t.text == "|" || t.text == "|&":
				endCmd()
			case t.text == "(" && len(sc.words) == 1 && i+1 < len(toks) && toks[i+1].text == ")":
				sc.funcDef = true
				i++
				endPipe()
			case t.text == "(" || t.text == ")":
				endPipe()
				out = append(out, pipeline{mark: t.text})
			default:
				endPipe()
			}
		}
	}
	endPipe()
	return out
}

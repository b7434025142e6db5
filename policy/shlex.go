package policy

import "strings"

// The shell lexer below is a heuristic for the safety policy, not a shell parser: it
// knows quotes, escapes, comments, operators, redirections, here-documents and the
// substitutions $(…), `…`, <(…) and >(…), and it never fails.

type tokKind uint8

const (
	tokWord  tokKind = iota + 1
	tokOp            // ; & && || | |& ( ) newline
	tokRedir         // > >> >| &> &>> < <> >& <& <<< << <<-
)

// subMark stands in a word's text for a substitution, whose value cannot be known.
const subMark = "\x00"

// token is one lexical element of a command line.
type token struct {
	kind tokKind
	// text is a word after quote removal, with $HOME and ${HOME} written as "~" and
	// substitutions as subMark; or the operator.
	text   string
	quoted bool
	// subs are the commands of the substitutions inside a word.
	subs []string
	// body is a here-document's text, for << and <<-; bodyQuoted says its delimiter
	// was quoted, so the shell does not expand it.
	body       string
	bodyQuoted bool
}

type lexer struct {
	s        string
	i        int
	toks     []token
	heredocs []int // indexes of << tokens whose bodies follow the next newline
}

// lex splits a command line into tokens.
func lex(s string) []token {
	l := &lexer{s: strings.ReplaceAll(s, "\\\n", "")}
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			l.i++
		case c == '\n':
			l.emit(tokOp, "\n", 1)
			l.readHeredocs()
		case c == '#':
			for l.i < len(l.s) && l.s[l.i] != '\n' {
				l.i++
			}
		case c == ';':
			l.emit(tokOp, ";", l.span(";;", ";&", ";"))
		case c == '&':
			switch {
			case strings.HasPrefix(l.s[l.i:], "&&"):
				l.emit(tokOp, "&&", 2)
			case strings.HasPrefix(l.s[l.i:], "&>>"):
				l.emit(tokRedir, "&>>", 3)
			case strings.HasPrefix(l.s[l.i:], "&>"):
				l.emit(tokRedir, "&>", 2)
			default:
				l.emit(tokOp, "&", 1)
			}
		case c == '|':
			op := l.s[l.i : l.i+l.span("||", "|&", "|")]
			l.emit(tokOp, op, len(op))
		case c == '(' || c == ')':
			l.emit(tokOp, string(c), 1)
		case (c == '<' || c == '>') && strings.HasPrefix(l.s[l.i+1:], "("):
			end := matchParen(l.s, l.i+2)
			l.toks = append(l.toks, token{kind: tokWord, text: subMark, subs: []string{l.s[l.i+2 : end]}})
			l.i = min(end+1, len(l.s))
		case c == '<':
			op := l.s[l.i : l.i+l.span("<<<", "<<-", "<<", "<>", "<&", "<")]
			l.emit(tokRedir, op, len(op))
			if op == "<<" || op == "<<-" {
				l.heredocs = append(l.heredocs, len(l.toks)-1)
			}
		case c == '>':
			op := l.s[l.i : l.i+l.span(">>", ">|", ">&", ">")]
			l.emit(tokRedir, op, len(op))
		default:
			l.word()
		}
	}
	return l.toks
}

// span returns the length of the first operator that the input continues with.
func (l *lexer) span(ops ...string) int {
	for _, op := range ops {
		if strings.HasPrefix(l.s[l.i:], op) {
			return len(op)
		}
	}
	return 1
}

func (l *lexer) emit(kind tokKind, text string, n int) {
	l.toks = append(l.toks, token{kind: kind, text: text})
	l.i += n
}

// readHeredocs reads the bodies of pending here-documents after a newline.
func (l *lexer) readHeredocs() {
	for _, h := range l.heredocs {
		if h+1 >= len(l.toks) || l.toks[h+1].kind != tokWord {
			continue
		}
		delim, strip := l.toks[h+1].text, l.toks[h].text == "<<-"
		var body []string
		for l.i < len(l.s) {
			end := strings.IndexByte(l.s[l.i:], '\n')
			if end < 0 {
				end = len(l.s) - l.i
			}
			line := l.s[l.i : l.i+end]
			l.i = min(l.i+end+1, len(l.s))
			cmp := line
			if strip {
				cmp = strings.TrimLeft(line, "\t")
			}
			if cmp == delim {
				break
			}
			body = append(body, line)
		}
		l.toks[h].body = strings.Join(body, "\n")
		l.toks[h].bodyQuoted = l.toks[h+1].quoted
	}
	l.heredocs = l.heredocs[:0]
}

// word reads one word. Digits directly before < or > are a file descriptor, not a word.
func (l *lexer) word() {
	var b strings.Builder
	t := token{kind: tokWord}
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch c {
		case ' ', '\t', '\r', '\n', ';', '&', '|', '(', ')':
			t.text = b.String()
			l.toks = append(l.toks, t)
			return
		case '<', '>':
			if !t.quoted && len(t.subs) == 0 && isDigits(b.String()) {
				return // a file descriptor number: the redirection follows
			}
			t.text = b.String()
			l.toks = append(l.toks, t)
			return
		case '\'':
			t.quoted = true
			end := strings.IndexByte(l.s[l.i+1:], '\'')
			if end < 0 {
				b.WriteString(l.s[l.i+1:])
				l.i = len(l.s)
				continue
			}
			b.WriteString(l.s[l.i+1 : l.i+1+end])
			l.i += end + 2
		case '"':
			t.quoted = true
			l.i++
			l.dquote(&b, &t)
		case '\\':
			t.quoted = true
			if l.i+1 < len(l.s) {
				b.WriteByte(l.s[l.i+1])
			}
			l.i += 2
		case '$':
			l.dollar(&b, &t)
		case '`':
			l.backtick(&b, &t)
		default:
			b.WriteByte(c)
			l.i++
		}
	}
	t.text = b.String()
	l.toks = append(l.toks, t)
}

// dquote reads the rest of a double-quoted string.
func (l *lexer) dquote(b *strings.Builder, t *token) {
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch c {
		case '"':
			l.i++
			return
		case '\\':
			if l.i+1 < len(l.s) && strings.IndexByte("\"\\$`", l.s[l.i+1]) >= 0 {
				b.WriteByte(l.s[l.i+1])
				l.i += 2
				continue
			}
			b.WriteByte(c)
			l.i++
		case '$':
			l.dollar(b, t)
		case '`':
			l.backtick(b, t)
		default:
			b.WriteByte(c)
			l.i++
		}
	}
}

// dollar reads a $ expansion at l.i.
func (l *lexer) dollar(b *strings.Builder, t *token) {
	rest := l.s[l.i+1:]
	switch {
	case strings.HasPrefix(rest, "(("):
		end := matchParen(l.s, l.i+2)
		b.WriteString("0")
		l.i = min(end+1, len(l.s))
	case strings.HasPrefix(rest, "("):
		end := matchParen(l.s, l.i+2)
		t.subs = append(t.subs, l.s[l.i+2:end])
		b.WriteString(subMark)
		l.i = min(end+1, len(l.s))
	case strings.HasPrefix(rest, "{"):
		end := matchBrace(l.s, l.i+2)
		inner := l.s[l.i+2 : end]
		if inner == "HOME" {
			b.WriteString("~")
		} else {
			b.WriteString("${" + inner + "}")
			t.subs = append(t.subs, extractSubs(inner)...)
		}
		l.i = min(end+1, len(l.s))
	case strings.HasPrefix(rest, "HOME") && !isNameByte(at(rest, 4)):
		b.WriteString("~")
		l.i += 5
	case strings.HasPrefix(rest, "'"):
		end := strings.IndexByte(rest[1:], '\'')
		if end < 0 {
			b.WriteString(rest[1:])
			l.i = len(l.s)
			return
		}
		b.WriteString(rest[1 : 1+end])
		l.i += end + 3
	default:
		b.WriteByte('$')
		l.i++
	}
}

// backtick reads a `…` substitution at l.i.
func (l *lexer) backtick(b *strings.Builder, t *token) {
	var inner strings.Builder
	i := l.i + 1
	for i < len(l.s) && l.s[i] != '`' {
		if l.s[i] == '\\' && i+1 < len(l.s) {
			i++
		}
		inner.WriteByte(l.s[i])
		i++
	}
	t.subs = append(t.subs, inner.String())
	b.WriteString(subMark)
	l.i = min(i+1, len(l.s))
}

// matchParen returns the index of the ")" that closes the "(" before i (or len(s)).
func matchParen(s string, i int) int {
	depth := 1
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			if end := strings.IndexByte(s[i+1:], '\''); end >= 0 {
				i += end + 1
			} else {
				return len(s)
			}
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// matchBrace returns the index of the "}" that closes the "{" before i (or len(s)).
func matchBrace(s string, i int) int {
	depth := 1
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// extractSubs returns the commands of the $(…) and `…` substitutions in text that
// the shell expands (an unquoted here-document, a ${…} expansion).
func extractSubs(text string) []string {
	var subs []string
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '\\':
			i++
		case strings.HasPrefix(text[i:], "$(") && !strings.HasPrefix(text[i:], "$(("):
			end := matchParen(text, i+2)
			subs = append(subs, text[i+2:end])
			i = end
		case text[i] == '`':
			end := strings.IndexByte(text[i+1:], '`')
			if end < 0 {
				return append(subs, text[i+1:])
			}
			subs = append(subs, text[i+1:i+1+end])
			i += end + 1
		}
	}
	return subs
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// at returns s[i], or 0 past the end.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

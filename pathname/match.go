package pathname

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Glob pattern errors.
var (
	ErrUnclosedClass       = errors.New("unclosed character class '['")
	ErrTooManyAlternatives = fmt.Errorf("more than %d alternatives after brace expansion", maxBraceAlternatives)
)

// maxBraceAlternatives bounds the patterns one {a,b} expansion may produce.
const maxBraceAlternatives = 256

type globKind uint8

const (
	globLit globKind = iota + 1
	globStar
	globAny
	globClass
)

// runeRange is an inclusive range of a character class.
type runeRange struct{ lo, hi rune }

// globTok is one element of a segment: a literal rune, *, ? or [class].
type globTok struct {
	kind   globKind
	r      rune
	ranges []runeRange
	negate bool
}

func (t globTok) matchRune(r rune) bool {
	switch t.kind {
	case globLit:
		return t.r == r
	case globAny:
		return true
	case globClass:
		in := false
		for _, rg := range t.ranges {
			if rg.lo <= r && r <= rg.hi {
				in = true
				break
			}
		}
		return in != t.negate
	case globStar:
		// A star matches runs, never one rune: the matcher consumes it before here.
	}
	return false
}

// Segment is a compiled pattern for one path element (it never contains '/').
type Segment struct {
	toks    []globTok
	literal string
	isLit   bool
}

// CompileSegment compiles one path element: * (any run of characters), ? (one
// character), [abc] [a-z] [!x] [^x] classes and \ escapes. Braces are literal here.
func CompileSegment(s string) (Segment, error) {
	var toks []globTok
	lit := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\\':
			i += size
			if i < len(s) {
				r, size = utf8.DecodeRuneInString(s[i:])
			}
			toks = append(toks, globTok{kind: globLit, r: r})
			i += size
		case '*':
			lit = false
			if len(toks) == 0 || toks[len(toks)-1].kind != globStar {
				toks = append(toks, globTok{kind: globStar})
			}
			i += size
		case '?':
			lit = false
			toks = append(toks, globTok{kind: globAny})
			i += size
		case '[':
			lit = false
			tok, n, err := compileClass(s[i:])
			if err != nil {
				return Segment{}, err
			}
			toks = append(toks, tok)
			i += n
		default:
			toks = append(toks, globTok{kind: globLit, r: r})
			i += size
		}
	}
	seg := Segment{toks: toks, isLit: lit}
	if lit {
		var b strings.Builder
		for _, t := range toks {
			b.WriteRune(t.r)
		}
		seg.literal = b.String()
	}
	return seg, nil
}

// compileClass compiles the class at the start of s ("[...]") and returns its length.
func compileClass(s string) (globTok, int, error) {
	tok := globTok{kind: globClass}
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		tok.negate = true
		i++
	}
	first := true
	for i < len(s) {
		if s[i] == ']' && !first {
			return tok, i + 1, nil
		}
		first = false
		lo, n := classRune(s[i:])
		i += n
		hi := lo
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			hi, n = classRune(s[i+1:])
			i += 1 + n
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		tok.ranges = append(tok.ranges, runeRange{lo, hi})
	}
	return globTok{}, 0, ErrUnclosedClass
}

func classRune(s string) (rune, int) {
	if s[0] == '\\' && len(s) > 1 {
		r, n := utf8.DecodeRuneInString(s[1:])
		return r, n + 1
	}
	return utf8.DecodeRuneInString(s)
}

// Match reports whether the whole name matches the segment.
func (s Segment) Match(name string) bool {
	if s.isLit {
		return name == s.literal
	}
	ti, ni := 0, 0
	starT, starN := -1, 0
	for ni < len(name) {
		r, size := utf8.DecodeRuneInString(name[ni:])
		if ti < len(s.toks) {
			t := s.toks[ti]
			if t.kind == globStar {
				starT, starN = ti, ni
				ti++
				continue
			}
			if t.matchRune(r) {
				ti++
				ni += size
				continue
			}
		}
		if starT < 0 {
			return false
		}
		_, sz := utf8.DecodeRuneInString(name[starN:])
		starN += sz
		ni = starN
		ti = starT + 1
	}
	for ti < len(s.toks) && s.toks[ti].kind == globStar {
		ti++
	}
	return ti == len(s.toks)
}

// pathSeg is one element of a path pattern: a Segment, or ** (any number of elements).
type pathSeg struct {
	double bool
	seg    Segment
}

// PathPattern is a compiled '/'-separated pattern without brace expansion, the
// form of a .gitignore rule.
type PathPattern struct {
	segs []pathSeg
}

// CompilePath compiles a '/'-separated pattern without brace expansion. Empty
// elements (from "a//b" or a leading "/") are dropped.
func CompilePath(p string) (PathPattern, error) {
	segs, err := compileSegs(p)
	return PathPattern{segs: segs}, err
}

// Empty reports whether the pattern has no elements (it was "" or only slashes).
func (p PathPattern) Empty() bool { return len(p.segs) == 0 }

// Match reports whether the path elements match the pattern's elements.
func (p PathPattern) Match(parts []string) bool { return matchPath(p.segs, parts) }

// compileSegs compiles the elements of a '/'-separated pattern.
func compileSegs(p string) ([]pathSeg, error) {
	var segs []pathSeg
	for _, part := range strings.Split(p, "/") {
		if part == "" {
			continue
		}
		if part == "**" {
			if len(segs) > 0 && segs[len(segs)-1].double {
				continue
			}
			segs = append(segs, pathSeg{double: true})
			continue
		}
		seg, err := CompileSegment(part)
		if err != nil {
			return nil, err
		}
		segs = append(segs, pathSeg{seg: seg})
	}
	return segs, nil
}

// matchPath reports whether the path elements match the pattern elements.
func matchPath(segs []pathSeg, parts []string) bool {
	cur := make([]bool, len(parts)+1)
	next := make([]bool, len(parts)+1)
	cur[0] = true
	for _, s := range segs {
		if s.double {
			acc := false
			for j := range cur {
				acc = acc || cur[j]
				next[j] = acc
			}
		} else {
			next[0] = false
			for j := 1; j <= len(parts); j++ {
				next[j] = cur[j-1] && s.seg.Match(parts[j-1])
			}
		}
		cur, next = next, cur
	}
	return cur[len(parts)]
}

// Pattern is a compiled Glob pattern: ** for any number of directories, *, ?,
// [...] and {a,b} alternatives, matched against '/'-separated relative paths.
type Pattern struct {
	alts [][]pathSeg
}

// Compile compiles a Glob pattern.
func Compile(p string) (*Pattern, error) {
	alts, err := expandBraces(p, nil)
	if err != nil {
		return nil, err
	}
	g := &Pattern{}
	for _, a := range alts {
		segs, err := compileSegs(a)
		if err != nil {
			return nil, err
		}
		g.alts = append(g.alts, segs)
	}
	return g, nil
}

// Match reports whether the '/'-separated relative path matches.
func (g *Pattern) Match(rel string) bool {
	parts := strings.Split(rel, "/")
	for _, segs := range g.alts {
		if matchPath(segs, parts) {
			return true
		}
	}
	return false
}

// expandBraces expands the first {a,b,...} group of p (recursively for the rest),
// appending the results to out. A group without a top-level comma is literal.
func expandBraces(p string, out []string) ([]string, error) {
	start, depth := -1, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				start = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			parts := splitTopLevel(p[start+1 : i])
			if len(parts) < 2 {
				i = start // literal braces: rescan what they enclose
				start = -1
				continue
			}
			for _, part := range parts {
				var err error
				out, err = expandBraces(p[:start]+part+p[i+1:], out)
				if err != nil {
					return nil, err
				}
				if len(out) > maxBraceAlternatives {
					return nil, ErrTooManyAlternatives
				}
			}
			return out, nil
		}
	}
	return append(out, p), nil
}

// splitTopLevel splits s at the commas outside nested braces.
func splitTopLevel(s string) []string {
	var parts []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				parts = append(parts, s[last:i])
				last = i + 1
			}
		}
	}
	return append(parts, s[last:])
}

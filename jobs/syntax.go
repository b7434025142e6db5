package jobs

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

var (
	yamlLine  = regexp.MustCompile(`^yaml: line (\d+): `)
	anchorRef = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)
)

// maxYAMLDepth is the nesting at which the YAML parser gives up.
const maxYAMLDepth = 10000

// maxSimpleKey is the longest implicit mapping key the YAML scanner reads.
const maxSimpleKey = 1024

// syntaxProblem reports a YAML syntax error at its line and column. The YAML library
// gives a line for most errors, none for bad bytes, and never a column, so the
// position is found in data: the offending byte for control characters, invalid
// UTF-8, tabs and nesting too deep; the start of the key for one too long; else the
// first character of the line the parser names.
func syntaxProblem(err error, data []byte, ps *problems) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var at position
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		at.line, _ = strconv.Atoi(m[1])
		msg = err.Error()[len(m[0]):]
	}
	switch {
	case strings.HasPrefix(msg, "did not find expected"):
		// The YAML parser (unlike its scanner) counts lines from 0, and leaves the
		// line out when it is the first.
		at.line++
	case anchorRef.MatchString(msg):
		name := anchorRef.FindStringSubmatch(msg)[1]
		if i := bytes.Index(data, []byte("*"+name)); i >= 0 {
			at = offsetPosition(data, i)
		}
	case strings.Contains(msg, "control characters"), strings.Contains(msg, "UTF-8"):
		if i, what := badByte(data); i >= 0 {
			at = offsetPosition(data, i)
			msg = what + " (" + msg + ")"
		}
	case strings.HasPrefix(msg, "exceeded max depth"):
		if i := tooDeep(data); i >= 0 {
			at = offsetPosition(data, i)
		}
	}
	if at.line > 0 && at.col == 0 {
		line := lineAt(data, at.line)
		switch {
		case strings.Contains(msg, "tab") || strings.Contains(msg, "cannot start any token"):
			if tab := indentTab(data, at.line); tab.line > 0 {
				at = tab
				if !strings.Contains(msg, "tab") {
					msg += ": a tab, which YAML does not allow for indentation (use spaces)"
				}
			}
		case strings.Contains(msg, "could not find expected ':'") && len(line) > maxSimpleKey:
			msg += " (a key longer than " + strconv.Itoa(maxSimpleKey) + " characters?)"
		}
		if at.col == 0 {
			at.col = firstNonBlank(line)
		}
	}
	ps.add(at, "", "yaml: %s", msg)
}

// offsetPosition returns the line and column (counted in characters) of byte i.
func offsetPosition(data []byte, i int) position {
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	return position{bytes.Count(data[:i], []byte("\n")) + 1, utf8.RuneCount(data[start:i]) + 1}
}

// lineAt returns line n (1-based) of data without its end, or nil.
func lineAt(data []byte, n int) []byte {
	for ; n > 1; n-- {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil
		}
		data = data[i+1:]
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[:i]
	}
	return bytes.TrimSuffix(data, []byte("\r"))
}

// indentTab returns the position of the first tab in the indentation of a line at or
// after line from (the scanner names the line before the one with the tab at times),
// or the zero position.
func indentTab(data []byte, from int) position {
	for n := from; n <= from+1; n++ {
		line := lineAt(data, n)
		indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if i := bytes.IndexByte(indent, '\t'); i >= 0 {
			return position{n, i + 1}
		}
	}
	return position{}
}

// firstNonBlank returns the column of the first character of line that is not a
// space or tab, 1 for a blank line.
func firstNonBlank(line []byte) int {
	n := len(line) - len(bytes.TrimLeft(line, " \t"))
	if n == len(line) {
		return 1
	}
	return utf8.RuneCount(line[:n]) + 1
}

// badByte returns the offset of the first byte that YAML refuses, a control
// character or invalid UTF-8, and what it is; -1 when there is none.
func badByte(data []byte) (int, string) {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return i, "invalid UTF-8 byte 0x" + strconv.FormatUint(uint64(data[i]), 16)
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f:
			return i, "control character " + strconv.QuoteRune(r)
		}
		i += size
	}
	return -1, ""
}

// tooDeep returns the offset of the flow bracket that opens a level past the YAML
// parser's limit, counting brackets outside quotes and comments; -1 when it finds none.
func tooDeep(data []byte) int {
	depth := 0
	var quote byte
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
		case c == '[' || c == '{':
			if depth++; depth >= maxYAMLDepth {
				return i
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return -1
}

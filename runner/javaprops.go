package runner

import (
	"strconv"
	"unicode/utf16"
)

// javaProperty is the value of key in b, a file of Java's properties format (as
// java.util.Properties loads it), and whether b sets it; where b sets it more than
// once, the last setting counts, as it does for Java. A line with a malformed \uXXXX
// escape, which Java refuses, is passed over.
func javaProperty(b []byte, key string) (string, bool) {
	var value string
	found := false
	for len(b) > 0 {
		var line []byte
		line, b = logicalLine(b)
		if k, v, ok := splitProperty(line); ok && k == key {
			value, found = v, true
		}
	}
	return value, found
}

// logicalLine splits the first logical line off b: its natural lines joined where one
// ends in an odd number of backslashes, each natural line's leading white space
// dropped, and blank lines and comments (# or ! first) passed over. Its escapes are
// left for splitProperty.
func logicalLine(b []byte) (line, rest []byte) {
	var (
		skipWhite, newLine = true, true
		comment, appended  = false, false
		backslash, skipLF  = false, false
	)
	for i := 0; i < len(b); i++ {
		c := b[i]
		if skipLF {
			skipLF = false
			if c == '\n' {
				continue
			}
		}
		if skipWhite {
			if c == ' ' || c == '\t' || c == '\f' || (!appended && (c == '\r' || c == '\n')) {
				continue
			}
			skipWhite, appended = false, false
		}
		if newLine {
			newLine = false
			if c == '#' || c == '!' {
				comment = true
				continue
			}
		}
		if c != '\n' && c != '\r' {
			line = append(line, c)
			backslash = c == '\\' && !backslash
			continue
		}
		switch {
		case comment || len(line) == 0:
			comment, newLine, skipWhite, backslash, line = false, true, true, false, line[:0]
		case backslash:
			line = line[:len(line)-1]
			skipWhite, appended, backslash, skipLF = true, true, false, c == '\r'
		default:
			return line, b[i+1:]
		}
	}
	if comment {
		return nil, nil
	}
	if backslash {
		line = line[:len(line)-1]
	}
	return line, nil
}

// splitProperty splits a logical line into its key and value, with their escapes
// undone: the key ends at the first unescaped '=', ':' or white space, and white space
// and one '=' or ':' after it are the separator. It is false for a blank line and for
// a malformed escape.
func splitProperty(line []byte) (key, value string, ok bool) {
	if len(line) == 0 {
		return "", "", false
	}
	end, start, sep, backslash := 0, len(line), false, false
	for ; end < len(line); end++ {
		c := line[end]
		if !backslash && (c == '=' || c == ':') {
			start, sep = end+1, true
			break
		}
		if !backslash && isPropertySpace(c) {
			start = end + 1
			break
		}
		backslash = c == '\\' && !backslash
	}
	for ; start < len(line); start++ {
		c := line[start]
		if isPropertySpace(c) {
			continue
		}
		if sep || (c != '=' && c != ':') {
			break
		}
		sep = true
	}
	k, kok := unescapeProperty(line[:end])
	v, vok := unescapeProperty(line[start:])
	return k, v, kok && vok
}

func isPropertySpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// unescapeProperty undoes the escapes of a key or value: \t, \n, \r, \f, \uXXXX (a
// UTF-16 unit; a surrogate pair is two), and a backslash before any other character
// stands for that character. It is false for a malformed \uXXXX.
func unescapeProperty(b []byte) (string, bool) {
	var units []uint16
	out := make([]byte, 0, len(b))
	flush := func() {
		if len(units) > 0 {
			out = append(out, string(utf16.Decode(units))...)
			units = units[:0]
		}
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 == len(b) {
			flush()
			out = append(out, c)
			continue
		}
		i++
		switch c = b[i]; c {
		case 'u':
			if i+5 > len(b) {
				return "", false
			}
			u, err := strconv.ParseUint(string(b[i+1:i+5]), 16, 16)
			if err != nil {
				return "", false
			}
			units = append(units, uint16(u))
			i += 4
			continue
		case 't':
			c = '\t'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 'f':
			c = '\f'
		}
		flush()
		out = append(out, c)
	}
	flush()
	return string(out), true
}

package jsonscan

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Text reads a string and returns its value: a slice of the input when the string has
// no escapes and is valid UTF-8, else the decoded value in the scanner's scratch
// buffer. Either is valid only until the next call. Decoding follows encoding/json:
// an invalid UTF-8 byte, a lone surrogate and a surrogate pair out of order each
// become U+FFFD.
func (s *Scanner) Text() ([]byte, bool) {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	escaped, ascii := false, true
	end := start
	for ; end < len(s.b); end++ {
		c := s.b[end]
		if c-0x20 < 0x5f && c != '"' && c != '\\' {
			continue // printable ASCII, the bulk of every string
		}
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			escaped = true
			end++ // the escaped byte, checked when decoding
		case c < 0x20:
			return nil, false
		default:
			ascii = false
		}
	}
	if end >= len(s.b) {
		return nil, false
	}
	raw := s.b[start:end]
	if !escaped && (ascii || utf8.Valid(raw)) {
		s.i = end + 1
		return raw, true
	}
	out, ok := unescape(s.scratch[:0], raw)
	if !ok {
		return nil, false
	}
	s.scratch = out
	s.i = end + 1
	return out, true
}

// String reads a string into dst. Like encoding/json, it reads null as nothing, leaving
// dst as it is.
func (s *Scanner) String(dst *string) bool {
	t, ok := s.Text()
	if !ok {
		return s.Null()
	}
	*dst = string(t)
	return true
}

// Name reads a string into dst like String, without allocating when it equals one of
// known: the type names that make up most of a stream, or the value the previous event
// had.
func (s *Scanner) Name(dst *string, known ...string) bool {
	t, ok := s.Text()
	if !ok {
		return s.Null()
	}
	for _, k := range known {
		if string(t) == k {
			*dst = k
			return true
		}
	}
	*dst = string(t)
	return true
}

// skipString reads a string, checking its escapes.
func (s *Scanner) skipString() bool {
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(s.b) {
				return false
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if hex4(s.b[j+1:]) < 0 {
					return false
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

// hex4 reads four hex digits, -1 when b does not start with them.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unescape appends the value of the string contents raw to dst.
func unescape(dst, raw []byte) ([]byte, bool) {
	for k := 0; k < len(raw); {
		c := raw[k]
		switch {
		case c == '\\':
			if k+1 >= len(raw) {
				return nil, false
			}
			k++
			switch raw[k] {
			case '"', '\\', '/':
				dst = append(dst, raw[k])
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(raw[k+1:])
				if r < 0 {
					return nil, false
				}
				k += 5
				if utf16.IsSurrogate(r) {
					if r2 := lowSurrogate(raw[k:]); r2 >= 0 {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							dst = utf8.AppendRune(dst, dec)
							k += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default:
				return nil, false
			}
			k++
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			k++
		default:
			r, size := utf8.DecodeRune(raw[k:])
			dst = utf8.AppendRune(dst, r)
			k += size
		}
	}
	return dst, true
}

// lowSurrogate reads a \uXXXX escape at the start of b, -1 when there is none.
func lowSurrogate(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	return hex4(b[2:])
}

// Package jsonscan reads JSON from a byte slice without reflection, for the hand-written
// fast paths of the stream decoders: an event's data is read member by member into the
// decoder's own structure, and a member the decoder does not know is skipped (and
// checked) by [Scanner.Ignore] instead of sending the whole event to encoding/json.
//
// Every method reports false for input it does not handle; the decoder then decodes
// the event with [Unmarshal] instead, which decides what is invalid. Whatever a method
// accepts, encoding/json accepts too, with the same value (FuzzScanner checks it); a
// method may refuse valid JSON it does not handle (a number that is not a small
// integer, nesting deeper than [MaxDepth]).
package jsonscan

import "unicode/utf8"

// MaxDepth is the deepest nesting of arrays and objects the scanner reads; encoding/json
// allows 10,000.
const MaxDepth = 1000

// Scanner reads JSON values from the input given to Reset, one after another. The zero
// Scanner reads an empty input. It keeps a scratch buffer across Resets, so one Scanner
// reused for every event of a stream allocates only when a string's escapes need it.
type Scanner struct {
	b       []byte
	i       int
	depth   int
	scratch []byte
}

// Reset makes the scanner read b from its start.
func (s *Scanner) Reset(b []byte) { s.b, s.i, s.depth = b, 0, 0 }

func (s *Scanner) space() {
	for s.i < len(s.b) {
		if c := s.b[s.i]; c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return
		}
		s.i++
	}
}

// consume skips spaces and then the byte c, reporting whether it was there.
func (s *Scanner) consume(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// End reports whether nothing but spaces is left.
func (s *Scanner) End() bool {
	s.space()
	return s.i == len(s.b)
}

// Object reads an object, calling member with each key, the scanner positioned at the
// member's value, which member must read. A key is handed over as its raw bytes, valid
// until the next call; a key with an escape or a control character is refused. Like
// encoding/json reading into a structure, it reads null as an object without members.
func (s *Scanner) Object(member func(key []byte) bool) bool {
	if !s.consume('{') {
		return s.Null()
	}
	if s.depth++; s.depth > MaxDepth {
		return false
	}
	ok := s.members(member)
	s.depth--
	return ok
}

// members reads an object's members and its closing brace.
func (s *Scanner) members(member func(key []byte) bool) bool {
	if s.consume('}') {
		return true
	}
	for {
		s.space()
		key, ok := s.rawKey()
		if !ok || !s.consume(':') {
			return false
		}
		s.space()
		if !member(key) {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume('}')
	}
}

// Array reads an array, calling elem for each element, the scanner positioned at it.
func (s *Scanner) Array(elem func() bool) bool {
	if !s.consume('[') {
		return false
	}
	if s.depth++; s.depth > MaxDepth {
		return false
	}
	ok := s.elements(elem)
	s.depth--
	return ok
}

// elements reads an array's elements and its closing bracket.
func (s *Scanner) elements(elem func() bool) bool {
	if s.consume(']') {
		return true
	}
	for {
		s.space()
		if !elem() {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume(']')
	}
}

// rawKey reads a string with no escapes and no control characters.
func (s *Scanner) rawKey() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// Ignore skips the value of a member whose key matched none of the decoder's fields. A
// decoder's field names are lower-case ASCII; encoding/json matches keys without regard
// to case (Unicode folding included), so a key with an upper-case or non-ASCII letter
// may still be one of them and is refused, and the event goes to encoding/json.
func (s *Scanner) Ignore(key []byte) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return s.Skip()
}

// Null reads null if it comes next, reporting whether it did; otherwise it reads
// nothing.
func (s *Scanner) Null() bool {
	if s.peekNull() {
		s.i += 4
		return true
	}
	return false
}

// peekNull reports whether null comes next, reading nothing.
func (s *Scanner) peekNull() bool {
	s.space()
	return s.i < len(s.b) && s.b[s.i] == 'n' && len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null"
}

// Skip reads one value of any type, checking its syntax.
func (s *Scanner) Skip() bool {
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.Object(func([]byte) bool { return s.Skip() })
	case c == '[':
		return s.Array(s.Skip)
	case c == '"':
		return s.skipString()
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return true
		}
	}
	return false
}

// Raw reads one value of any type and returns its bytes, valid until the next Reset.
func (s *Scanner) Raw() ([]byte, bool) {
	s.space()
	start := s.i
	if !s.Skip() {
		return nil, false
	}
	return s.b[start:s.i], true
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *Scanner) number() bool {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.peek() == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits reads one or more digits, reporting whether there was one.
func (s *Scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// peek returns the byte at the position, 0 at the end.
func (s *Scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// Int64 reads an integer of at most 18 digits (a number with a fraction or an exponent
// is refused: encoding/json does not read it into an integer either). Like
// encoding/json, it reads null as nothing, leaving dst as it is.
func (s *Scanner) Int64(dst *int64) bool {
	s.space()
	neg := s.peek() == '-'
	if neg {
		s.i++
	}
	start := s.i
	var n int64
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		n = n*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	switch {
	case digits == 0 && !neg:
		return s.Null()
	case digits == 0 || digits > 18:
		return false
	case digits > 1 && s.b[start] == '0':
		return false // a leading zero
	}
	switch s.peek() {
	case '.', 'e', 'E':
		return false
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

// Int reads an integer like Int64.
func (s *Scanner) Int(dst *int) bool {
	n := int64(*dst)
	if !s.Int64(&n) || int64(int(n)) != n {
		return false
	}
	*dst = int(n)
	return true
}

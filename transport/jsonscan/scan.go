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

import (
	"unicode/utf16"
	"unicode/utf8"
)

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

// Ptr reads a value for the pointer *p as encoding/json does: null sets *p to nil; any
// other value is read by read into **p, which Ptr allocates first when *p is nil (a
// pointer already set, by a repeated member, is read into again).
func Ptr[T any](s *Scanner, p **T, read func(*T) bool) bool {
	if s.Null() {
		*p = nil
		return true
	}
	if *p == nil {
		*p = new(T)
	}
	return read(*p)
}

// PtrTo reads like Ptr, but points *p at spare instead of allocating when *p is nil,
// zeroing spare first: for a decoder that reads a pointer member of every event and
// uses it only until the next one.
func PtrTo[T any](s *Scanner, p **T, spare *T, read func(*T) bool) bool {
	if *p == nil && !s.peekNull() {
		var zero T
		*spare = zero
		*p = spare
	}
	return Ptr(s, p, read)
}

// peekNull reports whether null comes next, reading nothing.
func (s *Scanner) peekNull() bool {
	s.space()
	return s.i < len(s.b) && s.b[s.i] == 'n' && len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null"
}

// Slice reads an array into *p as encoding/json does: null sets *p to nil; elements are
// read by read into the elements of *p, reused in place and appended as zero values
// when *p is shorter, and *p is cut to the array's length (an empty array gives an
// empty slice, not nil). A decoder that reuses a slice from one event to the next cuts
// it to length zero first, keeping its array.
func Slice[T any](s *Scanner, p *[]T, read func(*T) bool) bool {
	if s.Null() {
		*p = nil
		return true
	}
	n := 0
	ok := s.Array(func() bool {
		if n == len(*p) {
			var zero T
			*p = append(*p, zero)
		}
		n++
		return read(&(*p)[n-1])
	})
	*p = (*p)[:n]
	if n == 0 && *p == nil {
		*p = []T{}
	}
	return ok
}

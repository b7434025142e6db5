package anthropic

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// parseEvent decodes one event's data into w, which must be zero. The events that make
// up the bulk of every stream (content_block_delta, content_block_stop, ping,
// message_stop) take a hand-written path; whatever that path does not recognise goes
// through encoding/json, which then also decides what is invalid. Both give the same
// result for every input the fast path accepts (FuzzParseEvent checks it).
func parseEvent(data []byte, w *wireEvent) error {
	if fastEvent(data, w) {
		return nil
	}
	*w = wireEvent{}
	return json.Unmarshal(data, w)
}

// fastEvent decodes data if it is an object whose members are only type, index and
// delta, and whose delta members are only type, text, thinking, partial_json and
// signature, with plain string and integer values. It reports false for anything
// else, leaving w partly written.
func fastEvent(data []byte, w *wireEvent) bool {
	s := scanner{b: data}
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return s.name(&w.Type)
		case "index":
			return s.int(&w.Index)
		case "delta":
			return s.object(func(key []byte) bool {
				switch string(key) {
				case "type":
					return s.name(&w.Delta.Type)
				case "text":
					return s.str(&w.Delta.Text)
				case "thinking":
					return s.str(&w.Delta.Thinking)
				case "partial_json":
					return s.str(&w.Delta.PartialJSON)
				case "signature":
					return s.str(&w.Delta.Signature)
				}
				return false
			})
		}
		return false
	})
	s.space()
	return ok && s.i == len(s.b)
}

// scanner reads a small subset of JSON from b.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips spaces and then the byte c, reporting whether it was there.
func (s *scanner) consume(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object reads an object, calling member with each key, positioned at the value,
// which member must read.
func (s *scanner) object(member func(key []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		s.space()
		key, ok := s.rawString()
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

// rawString reads a string without escapes and returns its bytes.
func (s *scanner) rawString() ([]byte, bool) {
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

// name reads a type name into dst, without allocating for the names of the events
// and deltas that make up most of a stream.
func (s *scanner) name(dst *string) bool {
	raw, ok := s.rawString()
	if !ok {
		return s.str(dst)
	}
	switch string(raw) {
	case "content_block_delta":
		*dst = "content_block_delta"
	case "content_block_stop":
		*dst = "content_block_stop"
	case "text_delta":
		*dst = "text_delta"
	case "thinking_delta":
		*dst = "thinking_delta"
	case "input_json_delta":
		*dst = "input_json_delta"
	case "ping":
		*dst = "ping"
	default:
		if !utf8.Valid(raw) {
			return false
		}
		*dst = string(raw)
	}
	return true
}

// str reads a string of valid UTF-8 with no \u escapes into dst.
func (s *scanner) str(dst *string) bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	start := s.i + 1
	end, escapes, ascii := start, 0, true
	for ; end < len(s.b); end++ {
		c := s.b[end]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			escapes++
			end++ // the escaped byte, checked below
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if end >= len(s.b) {
		return false
	}
	raw := s.b[start:end]
	if !ascii && !utf8.Valid(raw) {
		return false // encoding/json replaces invalid bytes with U+FFFD
	}
	s.i = end + 1
	if escapes == 0 {
		*dst = string(raw)
		return true
	}
	var sb strings.Builder
	sb.Grow(len(raw) - escapes)
	for k := 0; k < len(raw); k++ {
		c := raw[k]
		if c != '\\' {
			sb.WriteByte(c)
			continue
		}
		k++
		switch raw[k] {
		case '"', '\\', '/':
			sb.WriteByte(raw[k])
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		default: // \u escapes and invalid ones
			return false
		}
	}
	*dst = sb.String()
	return true
}

// int reads a non-negative integer of at most nine digits.
func (s *scanner) int(dst *int) bool {
	n, digits := 0, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if digits == 9 || (digits == 1 && n == 0) {
			return false // too long, or a leading zero
		}
		n = n*10 + int(s.b[s.i]-'0')
		digits++
		s.i++
	}
	if digits == 0 {
		return false
	}
	*dst = n
	return true
}

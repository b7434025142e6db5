package protocol

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSONString appends s to dst as a JSON string and returns the extended buffer.
// The output is valid JSON and valid UTF-8 whatever bytes s holds: each invalid byte
// becomes \ufffd. It is what encoding/json writes with HTML escaping off: <, > and &
// stay as they are, U+2028 and U+2029 are escaped.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript line readers.
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\u202`...)
			dst = append(dst, hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// jsonObject writes the members of one JSON object in order.
type jsonObject struct {
	buf   []byte
	first bool
}

func (o *jsonObject) key(k string) {
	if o.first {
		o.first = false
	} else {
		o.buf = append(o.buf, ',')
	}
	o.buf = append(o.buf, '"')
	o.buf = append(o.buf, k...)
	o.buf = append(o.buf, '"', ':')
}

// anyKey is key for a name that is not a constant: it is escaped.
func (o *jsonObject) anyKey(k string) {
	if o.first {
		o.first = false
	} else {
		o.buf = append(o.buf, ',')
	}
	o.buf = append(AppendJSONString(o.buf, k), ':')
}

func (o *jsonObject) str(k, v string) {
	o.key(k)
	o.buf = AppendJSONString(o.buf, v)
}

func (o *jsonObject) strOpt(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *jsonObject) int(k string, v int64) {
	o.key(k)
	o.buf = strconv.AppendInt(o.buf, v, 10)
}

func (o *jsonObject) bool(k string, v bool) {
	o.key(k)
	o.buf = strconv.AppendBool(o.buf, v)
}

// appendTime appends t as a JSON string in TimeFormat: UTC, milliseconds. It is
// t.UTC().AppendFormat written out, since every events.jsonl line has one.
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		dst = append(dst, '"')
		return append(t.AppendFormat(dst, TimeFormat), '"')
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(dst, '"',
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z', '"')
}

// appendFloat appends f as a JSON number in the shortest form that reads back exactly,
// in the notation encoding/json uses. f must be finite.
func appendFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Shorten a two-digit negative exponent, e-07, to e-7.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// appendJSONValue appends raw, which should hold one JSON value: compacted when it is
// valid JSON in valid UTF-8, null when it is empty, and otherwise as a JSON string of
// its text, so the output stays valid whatever raw holds.
func appendJSONValue(dst []byte, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	if utf8.Valid(raw) && json.Valid(raw) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err == nil {
			return append(dst, buf.Bytes()...)
		}
	}
	return AppendJSONString(dst, string(raw))
}

func (o *jsonObject) strings(k string, v []string) {
	o.key(k)
	o.buf = append(o.buf, '[')
	for i, s := range v {
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		o.buf = AppendJSONString(o.buf, s)
	}
	o.buf = append(o.buf, ']')
}

// appendInput appends a tool input: the JSON object itself when input is a valid JSON
// object in valid UTF-8, otherwise the raw text as a JSON string. An object that spans
// lines is compacted so the event stays on one line.
func appendInput(dst []byte, input string) []byte {
	if isObject(input) {
		if bytes.ContainsAny([]byte(input), "\r\n") {
			var buf bytes.Buffer
			if err := json.Compact(&buf, []byte(input)); err == nil {
				return append(dst, buf.Bytes()...)
			}
		}
		return append(dst, input...)
	}
	return AppendJSONString(dst, input)
}

// isObject reports whether s is a JSON object in valid UTF-8 with no surrounding space.
func isObject(s string) bool {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return false
	}
	return utf8.ValidString(s) && json.Valid([]byte(s))
}

// InputMembers returns the top-level members of a tool input object, in order, as
// name/value pairs: a string member's value is the decoded string, any other value its
// JSON text. It returns nil when input is not a valid JSON object.
func InputMembers(input string) [][2]string {
	if !isObject(input) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(input)))
	if _, err := dec.Token(); err != nil { // {
		return nil
	}
	var out [][2]string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		name, ok := tok.(string)
		if !ok {
			return nil
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil
		}
		value := string(raw)
		if len(raw) > 0 && raw[0] == '"' {
			var s string
			if err := json.Unmarshal(raw, &s); err == nil {
				value = s
			}
		}
		out = append(out, [2]string{name, value})
	}
	return out
}

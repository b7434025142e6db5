package jsonscan_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/fuzzguard"
	"github.com/agentrun/agentrun/transport/jsonscan"
)

func TestSkip(t *testing.T) {
	tests := map[string]struct {
		give   string
		wantOK bool
	}{
		"object":              {give: `{"a":[1,-2.5e+3,true,false,null,{"b":"c\u00e9\n"}],"d":{}}`, wantOK: true},
		"spaces":              {give: " \t\r\n[ 1 , { } , [ ] ] \n", wantOK: true},
		"zero":                {give: `0`, wantOK: true},
		"negative fraction":   {give: `-0.001E-7`, wantOK: true},
		"invalid UTF-8":       {give: "\"\xff\xfe\"", wantOK: true},
		"leading zero":        {give: `01`},
		"bare minus":          {give: `-`},
		"dot without digits":  {give: `1.`},
		"exponent alone":      {give: `1e`},
		"plus sign":           {give: `+1`},
		"single quote escape": {give: `"\'"`},
		"short unicode":       {give: `"\u12"`},
		"bad hex":             {give: `"\u12g4"`},
		"control character":   {give: "\"a\x01\""},
		"trailing comma":      {give: `[1,]`},
		"missing colon":       {give: `{"a" 1}`},
		"non-string key":      {give: `{1:2}`},
		"two values":          {give: `1 2`},
		"unterminated":        {give: `{"a":"b`},
		"literal prefix":      {give: `nul`},
		"literal suffix":      {give: `truex`},
		"empty":               {give: ``},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var s jsonscan.Scanner
			s.Reset([]byte(tt.give))
			ok := s.Skip() && s.End()
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, json.Valid([]byte(tt.give)), ok, "agrees with encoding/json")
		})
	}
}

func TestText(t *testing.T) {
	tests := map[string]struct {
		give   string
		want   string
		wantOK bool
	}{
		"plain":              {give: `"hello"`, want: "hello", wantOK: true},
		"multibyte":          {give: `"Grüße 世界 🎉"`, want: "Grüße 世界 🎉", wantOK: true},
		"simple escapes":     {give: `"a\"b\\c\/d\n\t\r\b\f"`, want: "a\"b\\c/d\n\t\r\b\f", wantOK: true},
		"unicode escape":     {give: `"caf\u00e9"`, want: "café", wantOK: true},
		"surrogate pair":     {give: `"\ud83c\udf89"`, want: "🎉", wantOK: true},
		"lone high":          {give: `"\ud83cx"`, want: "\ufffdx", wantOK: true},
		"lone low":           {give: `"\udf89"`, want: "\ufffd", wantOK: true},
		"pair out of order":  {give: `"\udf89\ud83c"`, want: "\ufffd\ufffd", wantOK: true},
		"high then non-low":  {give: `"\ud83c\u0041"`, want: "\ufffdA", wantOK: true},
		"invalid UTF-8":      {give: "\"a\xffb\"", want: "a\ufffdb", wantOK: true},
		"escape and invalid": {give: "\"\\n\xc3\"", want: "\n\ufffd", wantOK: true},
		"not a string":       {give: `12`},
		"unterminated":       {give: `"abc`},
		"bad escape":         {give: `"\x"`},
		"control character":  {give: "\"\t\""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var s jsonscan.Scanner
			s.Reset([]byte(tt.give))
			got, ok := s.Text()
			require.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, string(got))
			var want string
			if ok {
				require.NoError(t, json.Unmarshal([]byte(tt.give), &want))
				assert.Equal(t, want, string(got), "agrees with encoding/json")
			}
		})
	}
}

func TestInt64(t *testing.T) {
	tests := map[string]struct {
		give   string
		want   int64
		wantOK bool
	}{
		"zero":            {give: `0`, want: 0, wantOK: true},
		"negative":        {give: `-1`, want: -1, wantOK: true},
		"negative zero":   {give: `-0`, want: 0, wantOK: true},
		"eighteen digits": {give: `123456789012345678`, want: 123456789012345678, wantOK: true},
		"nineteen digits": {give: `1234567890123456789`},
		"fraction":        {give: `1.0`},
		"exponent":        {give: `1e2`},
		"leading zero":    {give: `012`},
		"string":          {give: `"1"`},
		"bare minus":      {give: `-`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var s jsonscan.Scanner
			s.Reset([]byte(tt.give))
			var got int64
			ok := s.Int64(&got) && s.End()
			require.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// member is a structure decoded both ways in the tests of Object and Ignore.
type member struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
	Raw   json.RawMessage
}

// scanMember is the hand-written decoder of member a stream decoder would write.
func scanMember(s *jsonscan.Scanner, m *member) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return s.String(&m.Name)
		case "count":
			return s.Int64(&m.Count)
		case "raw":
			raw, ok := s.Raw()
			m.Raw = bytes.Clone(raw)
			return ok
		}
		return s.Ignore(key)
	}) && s.End()
}

func TestIgnore(t *testing.T) {
	tests := map[string]struct {
		give   string
		wantOK bool
	}{
		"unknown members skipped":    {give: `{"id":"x","name":"a","list":[1,{"b":null}],"count":3,"ok":true}`, wantOK: true},
		"raw value":                  {give: `{"raw": [1, "two"] }`, wantOK: true},
		"upper-case key refused":     {give: `{"Name":"a"}`},
		"non-ASCII key refused":      {give: "{\"\u212aey\":1}"},
		"escaped key refused":        {give: `{"na\u006de":"a"}`},
		"invalid skipped value":      {give: `{"id":[1,,2]}`},
		"unexpected type of a field": {give: `{"name":5}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var s jsonscan.Scanner
			s.Reset([]byte(tt.give))
			var fast member
			ok := scanMember(&s, &fast)
			require.Equal(t, tt.wantOK, ok)
			if ok {
				var slow member
				require.NoError(t, json.Unmarshal([]byte(tt.give), &slow))
				assert.Equal(t, slow, fast)
			}
		})
	}
}

func TestDepth(t *testing.T) {
	deep := bytes.Repeat([]byte("["), jsonscan.MaxDepth+1)
	deep = append(deep, bytes.Repeat([]byte("]"), jsonscan.MaxDepth+1)...)
	var s jsonscan.Scanner
	s.Reset(deep)
	assert.False(t, s.Skip(), "nesting past MaxDepth is refused")
	s.Reset(deep[1 : len(deep)-1])
	assert.True(t, s.Skip() && s.End(), "nesting of MaxDepth is read")
}

func TestUnmarshal(t *testing.T) {
	tests := map[string]struct {
		give    string
		want    member
		wantErr string
	}{
		"member of unexpected type reads as absent": {give: `{"name":{"x":1},"count":2}`, want: member{Count: 2}},
		"invalid JSON fails":                        {give: `{"name":`, wantErr: "unexpected end of JSON input"},
		"not an object fails":                       {give: `"text"`, wantErr: "cannot unmarshal string"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var got member
			err := jsonscan.Unmarshal([]byte(tt.give), &got)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// FuzzScanner checks the scanner against encoding/json: Skip accepts exactly the valid
// JSON values (short of MaxDepth), Text and Int64 give what encoding/json gives whenever
// they accept, Text accepts every string encoding/json reads, and a hand-written
// decoder that ignores unknown members agrees with json.Unmarshal. Text refuses null,
// which encoding/json reads into a string as nothing at all.
func FuzzScanner(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzguard.Run(len(in), func() {
			var s jsonscan.Scanner
			s.Reset(in)
			skipped := s.Skip() && s.End()
			deep := bytes.Count(in, []byte("["))+bytes.Count(in, []byte("{")) > jsonscan.MaxDepth
			if valid := json.Valid(in); skipped != valid && (!valid || !deep) {
				t.Fatalf("Skip says %v for %q, json.Valid %v", skipped, in, valid)
			}

			s.Reset(in)
			text, ok := s.Text()
			ok = ok && s.End()
			var str string
			strErr := json.Unmarshal(in, &str)
			isNull := string(bytes.TrimSpace(in)) == "null" // a no-op for encoding/json, refused by Text
			if ok != (strErr == nil && !isNull) || (ok && string(text) != str) {
				t.Fatalf("Text of %q: %q %v, encoding/json %q %v", in, text, ok, str, strErr)
			}

			s.Reset(in)
			var n, jn int64
			if s.Int64(&n) && s.End() {
				if err := json.Unmarshal(in, &jn); err != nil || n != jn {
					t.Fatalf("Int64 of %q: %d, encoding/json %d %v", in, n, jn, err)
				}
			}

			s.Reset(in)
			var fast member
			if scanMember(&s, &fast) {
				var slow member
				if err := json.Unmarshal(in, &slow); err != nil || !assert.ObjectsAreEqual(slow, fast) {
					t.Fatalf("object %q: fast %+v, encoding/json %+v %v", in, fast, slow, err)
				}
			}
		})
	})
}

package wire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/agentrun/agentrun/fuzzguard"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/transport/openai/wire"
)

func TestParseError(t *testing.T) {
	tests := map[string]struct {
		give       string
		want       wire.APIError
		wantOK     bool
		wantDetail bool // only ParseErrorOrDetail reads it
	}{
		"nested": {
			give:   `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			want:   wire.APIError{Message: "Incorrect API key provided.", Type: "invalid_request_error", Code: "invalid_api_key"},
			wantOK: true,
		},
		"integer code is a status": {
			give:   `{"error":{"code":402,"message":"Insufficient credits"}}`,
			want:   wire.APIError{Message: "Insufficient credits", Status: 402},
			wantOK: true,
		},
		"string code that is a status": {
			give:   `{"error":{"message":"busy","code":"503"}}`,
			want:   wire.APIError{Message: "busy", Code: "503", Status: 503},
			wantOK: true,
		},
		"integer code out of range": {
			give:   `{"error":{"message":"odd","code":200}}`,
			want:   wire.APIError{Message: "odd"},
			wantOK: true,
		},
		"plain string": {
			give:   ` {"error":"model is loading"} `,
			want:   wire.APIError{Message: "model is loading"},
			wantOK: true,
		},
		"error of another type": {
			give:   `{"error":[1,2]}`,
			want:   wire.APIError{Message: "[1,2]"},
			wantOK: true,
		},
		"flat": {
			give:   `{"object":"error","message":"bad","type":"BadRequestError","param":null,"code":400}`,
			want:   wire.APIError{Message: "bad", Type: "BadRequestError", Status: 400},
			wantOK: true,
		},
		"members of another type": {
			give:   `{"error":{"message":7,"type":{},"code":null}}`,
			wantOK: true,
		},
		"detail": {
			give:       `{"detail":"Not Found"}`,
			want:       wire.APIError{Message: "Not Found"},
			wantDetail: true,
		},
		"detail list": {
			give:       `{"detail":[{"msg":"field required"}]}`,
			want:       wire.APIError{Message: `[{"msg":"field required"}]`},
			wantDetail: true,
		},
		"error wins over detail": {
			give:   `{"error":"first","detail":"second"}`,
			want:   wire.APIError{Message: "first"},
			wantOK: true,
		},
		"null error":           {give: `{"error":null}`},
		"empty error":          {give: `{"error":{}}`},
		"empty detail":         {give: `{"detail":""}`},
		"object of other type": {give: `{"object":5,"detail":"x"}`},
		"other json":           {give: `{"choices":[]}`},
		"json string":          {give: `"error"`},
		"html":                 {give: `<html>bad gateway</html>`},
		"empty":                {give: ``},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := wire.ParseError([]byte(tt.give))
			assert.Equal(t, tt.wantOK, ok, "ParseError ok")
			if tt.wantOK {
				assert.Equal(t, tt.want, got, "ParseError")
			} else {
				assert.Zero(t, got, "ParseError")
			}

			got, ok = wire.ParseErrorOrDetail([]byte(tt.give))
			assert.Equal(t, tt.wantOK || tt.wantDetail, ok, "ParseErrorOrDetail ok")
			if tt.wantOK || tt.wantDetail {
				assert.Equal(t, tt.want, got, "ParseErrorOrDetail")
			} else {
				assert.Zero(t, got, "ParseErrorOrDetail")
			}
		})
	}
}

func TestTypeOrCode(t *testing.T) {
	assert.Equal(t, "invalid_request_error", wire.APIError{Type: "invalid_request_error", Code: "x"}.TypeOrCode())
	assert.Equal(t, "rate_limit_exceeded", wire.APIError{Code: "rate_limit_exceeded"}.TypeOrCode())
	assert.Empty(t, wire.APIError{}.TypeOrCode())
}

func TestTruthy(t *testing.T) {
	tests := map[string]bool{
		``: false, `null`: false, ` false `: false, `0`: false, `""`: false, `{}`: false, `[]`: false,
		`true`: true, `1`: true, `"x"`: true, `{"a":1}`: true, `[0]`: true, `{ }`: true,
	}
	for give, want := range tests {
		assert.Equal(t, want, wire.Truthy(json.RawMessage(give)), "Truthy(%q)", give)
	}
}

func TestJSONString(t *testing.T) {
	tests := map[string]struct {
		want   string
		wantOK bool
	}{
		` "a\u00e9" `: {want: "aé", wantOK: true},
		`""`:          {wantOK: true},
		`"unclosed`:   {},
		`12`:          {},
		`null`:        {},
		``:            {},
	}
	for give, tt := range tests {
		got, ok := wire.JSONString(json.RawMessage(give))
		assert.Equal(t, tt.wantOK, ok, "JSONString(%q) ok", give)
		assert.Equal(t, tt.want, got, "JSONString(%q)", give)
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	tests := map[string]struct {
		give string
		want string
	}{
		"short":           {give: "  short body \n", want: "short body"},
		"cut on a rune":   {give: "x" + long, want: "x" + strings.Repeat("é", 148) + "…"},
		"cut mid rune":    {give: long, want: strings.Repeat("é", 148) + "…"},
		"invalid utf-8":   {give: "a\xffb", want: "a\uFFFDb"},
		"exactly the max": {give: strings.Repeat("a", 300), want: strings.Repeat("a", 300)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.want, wire.Clip([]byte(tt.give)))
		})
	}
}

func TestJSONProblem(t *testing.T) {
	var v struct {
		N int `json:"n"`
	}
	tests := map[string]struct {
		give string
		want string
	}{
		"cut short":     {give: `{"n":`, want: "invalid JSON at offset 5"},
		"syntax":        {give: `{"n":1,}`, want: "invalid JSON at offset 8"},
		"not an object": {give: `[1]`, want: "not a chunk object"},
		"member type":   {give: `{"n":"1"}`, want: "unexpected type of n"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tt.give), &v)
			require.Error(t, err)
			assert.Equal(t, tt.want, wire.JSONProblem(err, "a chunk"))
		})
	}
	assert.Equal(t, "invalid JSON", wire.JSONProblem(errors.New("other"), "a chunk"))
}

func TestHeadReader(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), wire.MaxHead/10+100)
	h := wire.NewHeadReader(iotest.OneByteReader(bytes.NewReader(body[:100])))
	got, err := io.ReadAll(h)
	require.NoError(t, err)
	assert.Equal(t, body[:100], got)
	assert.Equal(t, body[:100], h.Head(), "a short body is kept whole")

	h = wire.NewHeadReader(bytes.NewReader(body))
	got, err = io.ReadAll(h)
	require.NoError(t, err)
	assert.Equal(t, body, got, "reads pass through")
	assert.Equal(t, body[:wire.MaxHead], h.Head(), "at most MaxHead bytes are kept")

	h = wire.NewHeadReader(bytes.NewReader(body))
	_, err = h.Read(make([]byte, 10))
	require.NoError(t, err)
	h.Stop()
	_, err = io.ReadAll(h)
	require.NoError(t, err)
	assert.Nil(t, h.Head(), "nothing is kept after Stop")
}

func TestSetHeaders(t *testing.T) {
	h := http.Header{}
	wire.SetHeaders(h, "sk-1", map[string]string{"OpenAI-Project": "p", "Accept": "application/json"})
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Equal(t, "application/json", h.Get("Accept"), "extra headers come last and win")
	assert.Equal(t, "Bearer sk-1", h.Get("Authorization"))
	assert.Equal(t, "p", h.Get("OpenAI-Project"))

	h = http.Header{}
	wire.SetHeaders(h, "", nil)
	assert.Empty(t, h.Values("Authorization"), "no key, no Authorization header")
	assert.Equal(t, "text/event-stream", h.Get("Accept"))
}

func TestArgumentsAndParameters(t *testing.T) {
	assert.Equal(t, "{}", wire.Arguments(nil))
	assert.Equal(t, "{}", wire.Arguments(json.RawMessage(" null ")))
	assert.Equal(t, `{"a":1}`, wire.Arguments(json.RawMessage(` {"a":1} `)))
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(wire.Parameters(json.RawMessage("  "))))
	assert.Equal(t, `{"type":"object"}`, string(wire.Parameters(json.RawMessage(`{"type":"object"}`))))
}

// FuzzParseError checks that the error parsers never panic, give valid UTF-8, that
// ParseErrorOrDetail reads everything ParseError reads, the same way, and that what
// they read classifies into a kind with a message.
func FuzzParseError(f *testing.F) {
	for _, s := range []string{`{"error":{"message":"m","type":"t","code":429}}`, `{"error":"x"}`,
		`{"object":"error","message":"m","code":"503"}`, `{"detail":"d"}`, `{"detail":{"a":"\xff"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzguard.Run(len(body), func() {
			e, ok := wire.ParseError(body)
			d, dok := wire.ParseErrorOrDetail(body)
			if ok && (!dok || d != e) {
				t.Fatalf("ParseError = %+v, %v; ParseErrorOrDetail = %+v, %v", e, ok, d, dok)
			}
			if !dok && d != (wire.APIError{}) {
				t.Fatalf("not an error body, yet %+v", d)
			}
			for _, s := range []string{d.Message, d.Type, d.Code} {
				if !utf8.ValidString(s) {
					t.Fatalf("invalid UTF-8 in %+v", d)
				}
			}
			if d.Status != 0 && (d.Status < 400 || d.Status > 599) {
				t.Fatalf("status %d is not an error status", d.Status)
			}
			if te := d.TransportError("error body"); te.Kind == "" || te.Message == "" || te.Kind != d.Kind() {
				t.Fatalf("%+v classified as %+v", d, te)
			}
		})
	})
}

package sse_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/transport/sse"
)

// ev is an sse.Event with string data, for readable tables.
type ev struct {
	Type    string
	Data    string
	ID      string
	Retry   time.Duration
	Comment bool
}

func collect(t *testing.T, r io.Reader, maxLine int) ([]ev, error) {
	t.Helper()
	d := sse.NewDecoder(r)
	if maxLine > 0 {
		d.SetMaxLine(maxLine)
	}
	var out []ev
	for d.Next() {
		borrowed := string(d.Borrow().Data)
		e := d.Event()
		assert.Equal(t, borrowed, string(e.Data), "Borrow and Event agree")
		if !e.Comment {
			require.NotNil(t, e.Data, "a dispatched event has non-nil Data")
		}
		out = append(out, ev{Type: e.Type, Data: string(e.Data), ID: e.ID, Retry: e.Retry, Comment: e.Comment})
	}
	assert.False(t, d.Next(), "Next after the end stays false")
	return out, d.Err()
}

// readers wraps an input in every reader shape the table runs through.
var readers = map[string]func(string) io.Reader{
	"whole":    func(s string) io.Reader { return strings.NewReader(s) },
	"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
	"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	"data err": func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
}

func TestDecoder(t *testing.T) {
	long := strings.Repeat("é0123456789", 200_000) // 2.4 MB with multibyte characters
	tests := map[string]struct {
		give    string
		maxLine int
		want    []ev
		wantErr error
	}{
		"LF": {
			give: "event: ping\ndata: {}\n\n",
			want: []ev{{Type: "ping", Data: "{}"}},
		},
		"CRLF": {
			give: "event: a\r\ndata: 1\r\n\r\nevent: b\r\ndata: 2\r\n\r\n",
			want: []ev{{Type: "a", Data: "1"}, {Type: "b", Data: "2"}},
		},
		"lone CR": {
			give: "event: a\rdata: 1\r\rdata: 2\r\r",
			want: []ev{{Type: "a", Data: "1"}, {Data: "2"}},
		},
		"mixed line ends": {
			give: "data: 1\r\ndata: 2\rdata: 3\n\r\n",
			want: []ev{{Data: "1\n2\n3"}},
		},
		"CR then blank LF line": {
			// CR LF is one line end; a second LF is a blank line.
			give: "data: x\r\n\n",
			want: []ev{{Data: "x"}},
		},
		"comment as keep-alive": {
			give: ": keep-alive\n\n:OPENROUTER PROCESSING\n\ndata: x\n\n",
			want: []ev{{Comment: true, Data: "keep-alive"}, {Comment: true, Data: "OPENROUTER PROCESSING"}, {Data: "x"}},
		},
		"comment inside an event": {
			give: "event: a\ndata: 1\n: ping\ndata: 2\n\n",
			want: []ev{{Comment: true, Data: "ping"}, {Type: "a", Data: "1\n2"}},
		},
		"only comments": {
			give: ":\n: one\r\n:two\r",
			want: []ev{{Comment: true, Data: ""}, {Comment: true, Data: "one"}, {Comment: true, Data: "two"}},
		},
		"multi-line data": {
			give: "data: first\ndata:second\ndata:  third\n\n",
			want: []ev{{Data: "first\nsecond\n third"}},
		},
		"empty data lines": {
			give: "data\ndata:\ndata: \n\n",
			want: []ev{{Data: "\n\n"}},
		},
		"event id retry fields": {
			give: "retry: 1500\nid: 7\nevent: update\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
			want: []ev{
				{Type: "update", Data: "a", ID: "7", Retry: 1500 * time.Millisecond},
				{Data: "b", ID: "7", Retry: 1500 * time.Millisecond},
				{Data: "c", Retry: 1500 * time.Millisecond},
			},
		},
		"bad retry and NUL id ignored": {
			give: "id: 1\nretry: 12a\nretry: -5\nretry:\ndata: a\n\nid: x\x00y\nretry: 99999999999999999999\ndata: b\n\n",
			want: []ev{{Data: "a", ID: "1"}, {Data: "b", ID: "1"}},
		},
		"field without colon": {
			give: "event\ndata\n\n",
			want: []ev{{Data: ""}},
		},
		"unknown fields ignored": {
			give: "foo: bar\nDATA: no\ndata: yes\nevent : no\n\n",
			want: []ev{{Data: "yes"}},
		},
		"value keeps colons and only one space goes": {
			give: "data:  a: b\n\n",
			want: []ev{{Data: " a: b"}},
		},
		"event type resets between events": {
			give: "event: a\ndata: 1\n\ndata: 2\n\nevent: a\ndata: 3\n\n",
			want: []ev{{Type: "a", Data: "1"}, {Data: "2"}, {Type: "a", Data: "3"}},
		},
		"event without data is not dispatched": {
			give: "event: a\n\ndata: 1\n\n",
			want: []ev{{Data: "1"}},
		},
		"empty blocks": {
			give: "\n\n\r\n\r\r\ndata: x\n\n\n\n",
			want: []ev{{Data: "x"}},
		},
		"BOM dropped": {
			give: "\xef\xbb\xbfdata: x\n\n",
			want: []ev{{Data: "x"}},
		},
		"BOM alone": {
			give: "\xef\xbb\xbf",
		},
		"BOM only at start": {
			give: "data: a\n\n\xef\xbb\xbfdata: b\n\n",
			want: []ev{{Data: "a"}},
		},
		"BOM prefix that is not a BOM": {
			give: "\xef\xbbdata: a\n\n",
			want: []ev{},
		},
		"event at EOF without blank line": {
			give: "event: message_stop\ndata: {\"type\":\"message_stop\"}",
			want: []ev{{Type: "message_stop", Data: `{"type":"message_stop"}`}},
		},
		"event at EOF after one line end": {
			give: "data: a\r",
			want: []ev{{Data: "a"}},
		},
		"empty stream": {
			give: "",
		},
		"multibyte characters": {
			give: "data: café — crème brûlée 6 € 🎉\n\n",
			want: []ev{{Data: "café — crème brûlée 6 € 🎉"}},
		},
		"invalid UTF-8 passes through": {
			give: "data: \xff\xfe\xc3\n\n",
			want: []ev{{Data: "\xff\xfe\xc3"}},
		},
		"line of several MB": {
			give: "event: big\ndata: " + long + "\n\ndata: after\n\n",
			want: []ev{{Type: "big", Data: long}, {Data: "after"}},
		},
		"line at the limit": {
			give:    "data: 12345\n\n",
			maxLine: len("data: 12345"),
			want:    []ev{{Data: "12345"}},
		},
		"line over the limit": {
			give:    "data: 123456\n\n",
			maxLine: len("data: 12345"),
			wantErr: sse.ErrLineTooLong,
		},
		"unterminated line over the limit": {
			give:    "data: 123456",
			maxLine: len("data: 12345"),
			wantErr: sse.ErrLineTooLong,
		},
		"event over the limit": {
			give:    "data: 1234\ndata: 1234\ndata: 1234\n\n",
			maxLine: 12,
			wantErr: sse.ErrEventTooLong,
		},
	}
	for name, tt := range tests {
		for rname, wrap := range readers {
			t.Run(name+"/"+rname, func(t *testing.T) {
				got, err := collect(t, wrap(tt.give), tt.maxLine)
				if tt.wantErr != nil {
					assert.ErrorIs(t, err, tt.wantErr)
					return
				}
				require.NoError(t, err)
				if len(tt.want) == 0 {
					assert.Empty(t, got)
					return
				}
				assert.Equal(t, tt.want, got)
			})
		}
	}
}

// TestDecoderSplitReads cuts the input at every position, so each line end and each
// multibyte character is split between two reads at least once.
func TestDecoderSplitReads(t *testing.T) {
	tests := map[string]struct {
		give string
		want []ev
	}{
		"CR LF split": {
			give: "data: a\r\ndata: b\r\n\r\n",
			want: []ev{{Data: "a\nb"}},
		},
		"lone CR": {
			give: "data: a\rdata: b\r\r",
			want: []ev{{Data: "a\nb"}},
		},
		"multibyte": {
			give: "data: é€🎉\n\n",
			want: []ev{{Data: "é€🎉"}},
		},
		"BOM": {
			give: "\xef\xbb\xbfdata: x\r\n\r\n",
			want: []ev{{Data: "x"}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			for cut := 0; cut <= len(tt.give); cut++ {
				r := io.MultiReader(strings.NewReader(tt.give[:cut]), strings.NewReader(tt.give[cut:]))
				got, err := collect(t, r, 0)
				require.NoError(t, err, "cut at %d", cut)
				assert.Equal(t, tt.want, got, "cut at %d", cut)
			}
		})
	}
}

func TestDecoderReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: partial"), iotest.ErrReader(boom))
	got, err := collect(t, r, 0)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, []ev{{Data: "a"}}, got, "the partial event is not dispatched after a read error")
}

func TestDecoderNoProgress(t *testing.T) {
	got, err := collect(t, emptyReader{}, 0)
	assert.ErrorIs(t, err, io.ErrNoProgress)
	assert.Empty(t, got)
}

// emptyReader returns no bytes and no error, forever.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestDecoderDataIsACopy(t *testing.T) {
	d := sse.NewDecoder(strings.NewReader("data: one\n\n: c\ndata: two\n\n"))
	require.True(t, d.Next())
	first := d.Event().Data
	first[0] = 'O'
	assert.Equal(t, "one", string(d.Borrow().Data), "changing a copy leaves the decoder's data alone")
	require.True(t, d.Next())
	comment := d.Event().Data
	require.True(t, d.Next())
	assert.Equal(t, "One", string(first), "a later event does not overwrite an earlier one's data")
	assert.Equal(t, "c", string(comment))
	assert.Equal(t, "two", string(d.Event().Data))
}

// TestDecoderManyCRLines feeds many CR-terminated lines after the buffer has grown, the
// case where a naive LF search would rescan the buffer once per line (its speed is
// measured by BenchmarkDecoderCRLines).
func TestDecoderManyCRLines(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("data: " + strings.Repeat("x", 1<<20) + "\n\n")
	for range 100_000 {
		b.WriteString("data: y\r\r")
	}
	d := sse.NewDecoder(&b)
	n := 0
	for d.Next() {
		n++
	}
	require.NoError(t, d.Err())
	assert.Equal(t, 100_001, n)
}

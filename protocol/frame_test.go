package protocol

import (
	"bytes"
	"errors"
	"github.com/agentrun/agentrun/fuzzguard"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFrameRoundTrip(t *testing.T) {
	frames := [][]string{{"CALL", "Bash", "{}"}, {""}, {"X", "", "a\r\nb", strings.Repeat("é", 70000)}}
	var buf []byte
	for _, f := range frames {
		buf = AppendFrame(buf, f...)
	}
	d := NewFrameDecoder(bytes.NewReader(buf), DefaultMaxFrame)
	var got [][]string
	for d.Next() {
		got = append(got, append([]string(nil), d.Fields()...))
	}
	require.NoError(t, d.Err())
	assert.Equal(t, frames, got)
}

func TestFrameSameBytesAsRESP(t *testing.T) {
	m := Message{Kind: KindToolCall, Call: ToolCall{Name: "Bash", ID: "t1", Input: `{"command":"ls"}`}}
	want, err := AppendRESP(nil, m)
	require.NoError(t, err)
	d := NewFrameDecoder(bytes.NewReader(want), DefaultMaxFrame)
	require.True(t, d.Next(), d.Err())
	assert.Equal(t, want, AppendFrame(nil, d.Fields()...))
}

func TestFrameErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		max  int
		want error
	}{
		{"bad header", "+OK\r\n", 100, ErrMalformed},
		{"no fields", "*0\r\n", 100, ErrMalformed},
		{"truncated", "*1\r\n$5\r\nab", 100, ErrTruncated},
		{"too large", "*2\r\n$3\r\nabc\r\n$3\r\nabc\r\n", 5, ErrFrameTooLarge},
		{"missing crlf", "*1\r\n$1\r\nab\r\n", 100, ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := NewFrameDecoder(strings.NewReader(c.in), c.max)
			assert.False(t, d.Next())
			assert.True(t, errors.Is(d.Err(), c.want), "%v", d.Err())
		})
	}
}

func FuzzFrameDecoder(f *testing.F) {
	f.Add([]byte("*2\r\n$4\r\nCALL\r\n$0\r\n\r\n"))
	f.Add([]byte("*1\r\n$99999999\r\nx"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzguard.Run(len(in), func() {
			d := NewFrameDecoder(bytes.NewReader(in), 1<<16)
			var out []byte
			var frames [][]string
			for d.Next() {
				frames = append(frames, append([]string(nil), d.Fields()...))
				out = AppendFrame(out, d.Fields()...)
			}
			// Whatever decoded re-encodes to frames that decode to the same fields.
			again := NewFrameDecoder(bytes.NewReader(out), 1<<16)
			for i := 0; again.Next(); i++ {
				assert.Equal(t, frames[i], again.Fields())
			}
			assert.NoError(t, again.Err())
		})
	})
}

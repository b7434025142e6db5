package protocol

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentrun/agentrun/fuzzguard"

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

// TestFrameFieldsAboutTheBuffer decodes fields of every size about the decoder's buffer
// and past firstGrow, from readers that return one byte, half of what is asked, or the
// last data with io.EOF, and a large field cut short.
func TestFrameFieldsAboutTheBuffer(t *testing.T) {
	sizes := []int{0, 1, frameBufferSize - 3, frameBufferSize - 2, frameBufferSize - 1, frameBufferSize,
		frameBufferSize + 1, 2*frameBufferSize + 5, 100 << 10, firstGrow, firstGrow + 7}
	var stream []byte
	var want [][]string
	for _, n := range sizes {
		f := []string{"F", strings.Repeat("ab\r\n\x00", n/5+1)[:n], "after"}
		want = append(want, f)
		stream = AppendFrame(stream, f...)
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":         func(r io.Reader) io.Reader { return r },
		"one byte":      iotest.OneByteReader,
		"half":          iotest.HalfReader,
		"data with EOF": iotest.DataErrReader,
	}
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			d := NewFrameDecoder(wrap(bytes.NewReader(stream)), DefaultMaxFrame)
			var got [][]string
			for d.Next() {
				got = append(got, append([]string(nil), d.Fields()...))
			}
			require.NoError(t, d.Err())
			require.Len(t, got, len(want))
			for i := range want {
				// Compared by length first: a failing assert.Equal would print a megabyte.
				require.Len(t, got[i], 3, "frame %d", i)
				assert.Len(t, got[i][1], len(want[i][1]), "frame %d", i)
				assert.True(t, got[i][1] == want[i][1] && got[i][2] == "after", "frame %d of a %d-byte field differs", i, sizes[i])
			}
		})
	}
	t.Run("cut short", func(t *testing.T) {
		cut := AppendFrame(nil, "F", strings.Repeat("x", 100<<10))
		d := NewFrameDecoder(bytes.NewReader(cut[:len(cut)-1000]), DefaultMaxFrame)
		assert.False(t, d.Next())
		assert.ErrorIs(t, d.Err(), ErrTruncated)
	})
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

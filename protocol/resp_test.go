package protocol_test

import (
	"bytes"
	"errors"
	"github.com/agentrun/agentrun/fuzzguard"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
)

// readers wraps the input of every decoding test: whole reads, one byte at a time,
// and half of each request.
var readers = map[string]func(io.Reader) io.Reader{
	"whole":    func(r io.Reader) io.Reader { return r },
	"one byte": iotest.OneByteReader,
	"half":     iotest.HalfReader,
}

func TestRESPRoundTrip(t *testing.T) {
	for sname, s := range trickyStrings {
		for mname, m := range messagesWith(s) {
			frame := encodeAll(t, m)
			for rname, wrap := range readers {
				t.Run(sname+"/"+mname+"/"+rname, func(t *testing.T) {
					got, err := decodeAll(t, protocol.NewRESPDecoder(wrap(bytes.NewReader(frame))))
					require.NoError(t, err)
					require.Len(t, got, 1)
					assert.Equal(t, m, got[0])
				})
			}
		}
	}
}

func TestRESPRoundTripNilLists(t *testing.T) {
	tests := map[string]protocol.Message{
		"nil tools":   {Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{SessionID: "s"}},
		"empty tools": {Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{SessionID: "s", Tools: []string{}}},
		"nil checks":  {Kind: protocol.KindResult, Final: &protocol.Result{Status: protocol.StatusSuccess}},
		"empty checks": {Kind: protocol.KindResult, Final: &protocol.Result{Status: protocol.StatusSuccess,
			Checks: []protocol.Check{}}},
		"empty error": {Kind: protocol.KindResult, Final: &protocol.Result{Error: &protocol.Error{}}},
	}
	for name, m := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeAll(t, protocol.NewRESPDecoder(bytes.NewReader(encodeAll(t, m))))
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, m, got[0])
		})
	}
}

func TestRESPRoundTripLargeFields(t *testing.T) {
	big := strings.Repeat("0123456789\r\n\x00\xff", 10<<20/14+1) // 10 MiB and a bit
	msgs := []protocol.Message{
		{Kind: protocol.KindText, Text: big},
		{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: "t", Name: "Bash", Content: big}},
		{Kind: protocol.KindText, Text: "after"},
	}
	stream := encodeAll(t, msgs...)
	for rname, wrap := range map[string]func(io.Reader) io.Reader{"whole": readers["whole"], "half": readers["half"]} {
		t.Run(rname, func(t *testing.T) {
			got, err := decodeAll(t, protocol.NewRESPDecoder(wrap(bytes.NewReader(stream))))
			require.NoError(t, err)
			require.Len(t, got, len(msgs))
			for i := range msgs {
				// reflect.DeepEqual: a failing assert.Equal would print 10 MiB.
				assert.True(t, reflect.DeepEqual(msgs[i], got[i]), "message %d differs", i)
			}
		})
	}
}

func TestRESPSeedFrame(t *testing.T) {
	// The example frame of the seed's protocol, byte for byte.
	const seed = "*6\r\n$9\r\nTOOL_CALL\r\n$4\r\nBash\r\n$8\r\ncall_123\r\n$17\r\n{\"command\":\"pwd\"}\r\n$7\r\ncommand\r\n$3\r\npwd\r\n"
	m := protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", ID: "call_123", Input: `{"command":"pwd"}`}}
	assert.Equal(t, seed, string(encodeAll(t, m)))

	got, err := decodeAll(t, protocol.NewRESPDecoder(strings.NewReader(seed)))
	require.NoError(t, err)
	assert.Equal(t, []protocol.Message{m}, got)
}

func TestRESPDecodeErrors(t *testing.T) {
	text := "*2\r\n$4\r\nTEXT\r\n"
	tests := []struct {
		name     string
		give     string
		maxFrame int
		wantMsgs int
		want     error
	}{
		{name: "zero fields", give: "*0\r\n", want: protocol.ErrMalformed},
		{name: "negative count", give: "*-1\r\n", want: protocol.ErrMalformed},
		{name: "too many fields", give: "*70000\r\n", want: protocol.ErrMalformed},
		{name: "count too long", give: "*99999999999\r\n", want: protocol.ErrMalformed},
		{name: "LF without CR", give: "*2\n$4\r\nTEXT\r\n$0\r\n\r\n", want: protocol.ErrMalformed},
		{name: "not a frame", give: "hello\r\n", want: protocol.ErrMalformed},
		{name: "empty count", give: "*\r\n", want: protocol.ErrMalformed},
		{name: "bad length", give: text + "$x\r\n", want: protocol.ErrMalformed},
		{name: "plus sign", give: text + "$+1\r\nx\r\n", want: protocol.ErrMalformed},
		{name: "array for field", give: text + "*1\r\n", want: protocol.ErrMalformed},
		{name: "header too long", give: "*" + strings.Repeat("1", 70<<10) + "\r\n", want: protocol.ErrMalformed},
		{name: "unknown type", give: "*1\r\n$3\r\nFOO\r\n", want: protocol.ErrMalformed},
		{name: "long type", give: "*1\r\n$40\r\n" + strings.Repeat("T", 40) + "\r\n", want: protocol.ErrMalformed},
		{name: "lower case type", give: "*2\r\n$4\r\ntext\r\n$0\r\n\r\n", want: protocol.ErrMalformed},
		{name: "too few fields", give: "*1\r\n$4\r\nTEXT\r\n", want: protocol.ErrMalformed},
		{name: "no CRLF after field", give: text + "$2\r\nhiXY", want: protocol.ErrMalformed},
		{name: "no CRLF after large field", give: text + "$70000\r\n" + strings.Repeat("a", 70000) + "XY", want: protocol.ErrMalformed},
		{name: "odd trailing fields", give: "*3\r\n" + "$4\r\nTEXT\r\n$2\r\nhi\r\n$1\r\nx\r\n", want: protocol.ErrMalformed},
		{name: "usage not a number", give: "*5\r\n$5\r\nUSAGE\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\n1\r\n$1\r\n1\r\n", want: protocol.ErrMalformed},
		{name: "bad is_error flag", give: "*5\r\n$11\r\nTOOL_RESULT\r\n$1\r\nt\r\n$1\r\nn\r\n$0\r\n\r\n$1\r\n2\r\n", want: protocol.ErrMalformed},
		{name: "bad list count", give: "*8\r\n$13\r\nSESSION_START\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$1\r\n5\r\n", want: protocol.ErrMalformed},
		{name: "tool call missing members", give: "*4\r\n$9\r\nTOOL_CALL\r\n$1\r\nn\r\n$1\r\ni\r\n$7\r\n{\"a\":1}\r\n", want: protocol.ErrMalformed},
		{name: "bad frame after good one", give: text + "$1\r\nx\r\n" + "*1\r\n$3\r\nFOO\r\n", wantMsgs: 1, want: protocol.ErrMalformed},

		{name: "field over limit", give: text + "$20\r\n" + strings.Repeat("a", 20) + "\r\n", maxFrame: 16, want: protocol.ErrFrameTooLarge},
		{name: "type over limit", give: text + "$0\r\n\r\n", maxFrame: 3, want: protocol.ErrFrameTooLarge},
		{name: "sum over limit", give: "*3\r\n$4\r\nSTOP\r\n$6\r\nreason\r\n$6\r\nparent\r\n", maxFrame: 12, want: protocol.ErrFrameTooLarge},
		{name: "declared over default limit", give: text + "$67108865\r\n", want: protocol.ErrFrameTooLarge},

		{name: "star only", give: "*", want: protocol.ErrTruncated},
		{name: "count without CRLF", give: "*2", want: protocol.ErrTruncated},
		{name: "count without LF", give: "*2\r", want: protocol.ErrTruncated},
		{name: "no type field", give: "*2\r\n", want: protocol.ErrTruncated},
		{name: "inside type", give: "*2\r\n$4\r\nTE", want: protocol.ErrTruncated},
		{name: "no second field", give: text, want: protocol.ErrTruncated},
		{name: "inside length", give: text + "$1", want: protocol.ErrTruncated},
		{name: "inside payload", give: text + "$5\r\nhel", want: protocol.ErrTruncated},
		{name: "no CRLF at end", give: text + "$5\r\nhello", want: protocol.ErrTruncated},
		{name: "no LF at end", give: text + "$5\r\nhello\r", want: protocol.ErrTruncated},
		{name: "inside large payload", give: text + "$100000\r\n" + strings.Repeat("a", 50000), want: protocol.ErrTruncated},
		{name: "large payload without CRLF", give: text + "$100000\r\n" + strings.Repeat("a", 100000), want: protocol.ErrTruncated},
		{name: "truncated after good frame", give: text + "$1\r\nx\r\n" + "*2\r\n$4\r\nTEXT\r\n$3\r\nab", wantMsgs: 1, want: protocol.ErrTruncated},
	}
	sentinels := []error{protocol.ErrMalformed, protocol.ErrFrameTooLarge, protocol.ErrTruncated}
	for _, tt := range tests {
		for rname, wrap := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				d := protocol.NewRESPDecoder(wrap(strings.NewReader(tt.give)))
				if tt.maxFrame > 0 {
					d.SetMaxFrame(tt.maxFrame)
				}
				got, err := decodeAll(t, d)
				assert.Len(t, got, tt.wantMsgs)
				require.ErrorIs(t, err, tt.want)
				for _, other := range sentinels {
					if other != tt.want { //nolint:errorlint // two sentinels compared for identity, no error is checked
						assert.NotErrorIs(t, err, other)
					}
				}
			})
		}
	}
}

func TestRESPDecodeCleanEnd(t *testing.T) {
	tests := map[string]string{
		"empty":      "",
		"two frames": "*2\r\n$4\r\nTEXT\r\n$2\r\nhi\r\n*2\r\n$4\r\nSTOP\r\n$8\r\nend_turn\r\n",
	}
	for name, give := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := decodeAll(t, protocol.NewRESPDecoder(strings.NewReader(give)))
			assert.NoError(t, err)
		})
	}
}

func TestRESPDecodeReaderError(t *testing.T) {
	boom := errors.New("boom")
	frame := "*2\r\n$4\r\nTEXT\r\n$2\r\nhi\r\n"
	r := io.MultiReader(strings.NewReader(frame), iotest.ErrReader(boom))
	got, err := decodeAll(t, protocol.NewRESPDecoder(r))
	assert.Len(t, got, 1)
	assert.ErrorIs(t, err, boom)
}

func TestRESPEncodeInvalidKind(t *testing.T) {
	_, err := protocol.AppendRESP(nil, protocol.Message{})
	assert.Error(t, err)
}

func TestRESPWriterOneWritePerFrame(t *testing.T) {
	var w countingWriter
	enc := protocol.NewRESPWriter(&w)
	msgs := messagesWith("x\r\ny")
	for _, m := range msgs {
		require.NoError(t, enc.Write(m))
	}
	assert.Equal(t, len(msgs), w.writes)

	got, err := decodeAll(t, protocol.NewRESPDecoder(bytes.NewReader(w.buf.Bytes())))
	require.NoError(t, err)
	assert.Len(t, got, len(msgs))
}

type countingWriter struct {
	buf    bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.buf.Write(p)
}

func FuzzDecode(f *testing.F) {
	for _, m := range messagesWith("a\r\n\xff") {
		f.Add(encodeAll(f, m))
	}
	f.Add([]byte("*2\r\n$4\r\nTEXT\r\n$3\r\nab"))
	f.Add([]byte("*1\r\n$3\r\nFOO\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzguard.Run(len(data), func() {
			d := protocol.NewRESPDecoder(bytes.NewReader(data))
			d.SetMaxFrame(1 << 20)
			var msgs []protocol.Message
			for d.Next() {
				msgs = append(msgs, d.Message())
			}
			if err := d.Err(); err != nil {
				known := errors.Is(err, protocol.ErrMalformed) || errors.Is(err, protocol.ErrFrameTooLarge) ||
					errors.Is(err, protocol.ErrTruncated)
				require.True(t, known, "unknown error %v", err)
			}
			// What decodes re-encodes, and decodes to the same messages.
			again := encodeAll(t, msgs...)
			got, err := decodeAll(t, protocol.NewRESPDecoder(bytes.NewReader(again)))
			require.NoError(t, err)
			require.Equal(t, len(msgs), len(got))
			for i := range msgs {
				require.Equal(t, msgs[i], got[i])
			}
		})
	})
}

func TestRESPErrorQuotesWholeCharacters(t *testing.T) {
	// A header of 20 three-byte characters: 32 bytes would end inside the 11th.
	_, err := decodeAll(t, protocol.NewRESPDecoder(strings.NewReader(strings.Repeat("€", 20)+"\r\n")))
	require.ErrorIs(t, err, protocol.ErrMalformed)
	assert.NotContains(t, err.Error(), `\x`, "the quoted header is cut at a character boundary")
	assert.Contains(t, err.Error(), `"€€€€€€€€€€`)
}

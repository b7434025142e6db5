package protocol_test

import (
	"bytes"
	"errors"
	"github.com/agentrun/agentrun/fuzzguard"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
)

// readEvents reads every event of r and returns the text or event type of each.
func readEvents(t *testing.T, er *protocol.EventReader) ([]string, error) {
	t.Helper()
	var out []string
	for er.Next() {
		m := er.Message()
		if m.Kind == protocol.KindText {
			out = append(out, m.Text)
		} else {
			out = append(out, m.Kind.EventType())
		}
	}
	assert.False(t, er.Next(), "Next after the end")
	return out, er.Err()
}

func TestEventReader(t *testing.T) {
	const (
		a    = `{"type":"text","seq":1,"content":"a"}`
		b    = `{"type":"text","seq":2,"content":"b"}`
		stop = `{"type":"stop","reason":"end_turn"}`
		bad  = `{"type":"text","content":`
	)
	tests := []struct {
		name     string
		give     string
		maxLine  int
		want     []string
		wantLine int // the line of the expected *LineError, 0 for none
		wantErr  error
	}{
		{name: "empty", give: ""},
		{name: "events", give: a + "\n" + b + "\n" + stop + "\n", want: []string{"a", "b", "stop"}},
		{name: "CRLF", give: a + "\r\n" + b + "\r\n", want: []string{"a", "b"}},
		{name: "blank lines", give: "\n" + a + "\n\n  \n" + b + "\n\n", want: []string{"a", "b"}},
		{name: "unknown types skipped", give: a + "\n" + `{"type":"debug","x":1}` + "\n" + `{"no":"type"}` + "\n" + b + "\n", want: []string{"a", "b"}},
		{name: "torn last line", give: a + "\n" + b[:10], want: []string{"a"}},
		{name: "last line without newline", give: a + "\n" + b, want: []string{"a"}},
		{name: "bad last line", give: a + "\n" + bad + "\n", want: []string{"a"}},
		{name: "bad last line and blank lines", give: a + "\n" + bad + "\n\n \n", want: []string{"a"}},
		{name: "bad line in the middle", give: a + "\n" + bad + "\n" + b + "\n", want: []string{"a"}, wantLine: 2},
		{name: "bad line then torn line", give: a + "\n" + bad + "\n" + b[:5], want: []string{"a"}, wantLine: 2},
		{name: "bad line after blank lines", give: a + "\n\n\n" + "[1]\n" + b + "\n", want: []string{"a"}, wantLine: 4},
		{name: "bad first line", give: "garbage\n" + a + "\n", wantLine: 1},
		{name: "long line in the middle", give: a + "\n" + strings.Repeat("x", 100) + "\n" + b + "\n", maxLine: 60, want: []string{"a"}, wantLine: 2, wantErr: protocol.ErrLineTooLong},
		{name: "long last line", give: a + "\n" + strings.Repeat("x", 100) + "\n", maxLine: 60, want: []string{"a"}, wantLine: 2, wantErr: protocol.ErrLineTooLong},
		{name: "long torn last line", give: a + "\n" + strings.Repeat("x", 100), maxLine: 60, want: []string{"a"}},
		{name: "line at the limit", give: a + "\n", maxLine: len(a), want: []string{"a"}},
		{name: "line over the limit", give: a + "\n", maxLine: len(a) - 1, wantLine: 1, wantErr: protocol.ErrLineTooLong},
		{name: "bad line then long torn line", give: bad + "\n" + strings.Repeat("x", 100), maxLine: 60, wantLine: 1},
	}
	for _, tt := range tests {
		for rname, wrap := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				er := protocol.NewEventReader(wrap(strings.NewReader(tt.give)))
				if tt.maxLine > 0 {
					er.SetMaxLine(tt.maxLine)
				}
				got, err := readEvents(t, er)
				assert.Equal(t, tt.want, got)
				if tt.wantLine == 0 {
					require.NoError(t, err)
					return
				}
				var le *protocol.LineError
				require.ErrorAs(t, err, &le)
				assert.Equal(t, tt.wantLine, le.Line)
				assert.Contains(t, err.Error(), "line "+strconv.Itoa(tt.wantLine))
				if tt.wantErr != nil {
					assert.ErrorIs(t, err, tt.wantErr)
				}
			})
		}
	}
}

func TestEventReaderEnvelopeAndMessage(t *testing.T) {
	in := `{"type":"tool_call","seq":5,"ts":"2026-05-06T12:00:00.250Z","session_id":"s1","job_id":"j1","name":"Bash","id":"t1","input":{"command":"ls"}}` + "\n"
	er := protocol.NewEventReader(strings.NewReader(in))
	require.True(t, er.Next())
	assert.Equal(t, protocol.ToolCall{Name: "Bash", ID: "t1", Input: `{"command":"ls"}`}, er.Message().Call)
	env := er.Envelope()
	assert.Equal(t, int64(5), env.Seq)
	assert.Equal(t, "s1", env.SessionID)
	assert.Equal(t, "j1", env.JobID)
	assert.Equal(t, "2026-05-06T12:00:00.25Z", env.TS.UTC().Format("2006-01-02T15:04:05.999Z07:00"))
	assert.False(t, er.Next())
	assert.NoError(t, er.Err())
}

func TestEventReaderLargeLine(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 20<<20/16) // 20 MiB of content
	var buf []byte
	var err error
	for _, text := range []string{"before", big, "after"} {
		buf, err = protocol.AppendEvent(buf, protocol.Message{Kind: protocol.KindText, Text: text}, protocol.Envelope{})
		require.NoError(t, err)
		buf = append(buf, '\n')
	}
	er := protocol.NewEventReader(bytes.NewReader(buf))
	var got []string
	for er.Next() {
		got = append(got, er.Message().Text)
	}
	require.NoError(t, er.Err())
	require.Len(t, got, 3)
	assert.Equal(t, "before", got[0])
	assert.True(t, got[1] == big, "the large line differs")
	assert.Equal(t, "after", got[2])
}

func TestEventReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader(`{"type":"stop"}`+"\n"), iotest.ErrReader(boom))
	got, err := readEvents(t, protocol.NewEventReader(r))
	assert.Equal(t, []string{"stop"}, got)
	assert.ErrorIs(t, err, boom)
}

func FuzzEventReader(f *testing.F) {
	for _, m := range messagesWith("a\n\xff") {
		line, err := protocol.AppendEvent(nil, m, protocol.Envelope{Seq: 1})
		require.NoError(f, err)
		f.Add(append(line, '\n'))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzguard.Run(len(data), func() {
			er := protocol.NewEventReader(bytes.NewReader(data))
			er.SetMaxLine(1 << 12)
			var msgs []protocol.Message
			for er.Next() {
				msgs = append(msgs, er.Message())
			}
			if err := er.Err(); err != nil {
				var le *protocol.LineError
				require.ErrorAs(t, err, &le)
				require.Positive(t, le.Line)
			}
			// The events read re-encode to lines that read back the same.
			var out []byte
			for _, m := range msgs {
				line, err := protocol.AppendEvent(out, m, protocol.Envelope{})
				require.NoError(t, err)
				out = append(line, '\n')
			}
			again := protocol.NewEventReader(bytes.NewReader(out))
			var got []protocol.Message
			for again.Next() {
				got = append(got, again.Message())
			}
			require.NoError(t, again.Err())
			require.Equal(t, msgs, got)
		})
	})
}

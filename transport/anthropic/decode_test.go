package anthropic_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/testexit"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/transporttest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit)) }

var _ transport.Dialect = (*anthropic.Dialect)(nil)

// decodeAll reads every message of body and, when the stream failed, one KindError
// message for the decoder's error.
func decodeAll(t *testing.T, body io.Reader) []protocol.Message {
	t.Helper()
	d := anthropic.NewDecoder(body)
	var out []protocol.Message
	for d.Next() {
		out = append(out, d.Message())
	}
	assert.False(t, d.Next(), "Next after the end stays false")
	if err := d.Err(); err != nil {
		out = append(out, errorMessage(err))
	}
	return out
}

// errorMessage is the KindError message of a decoder error; a read error that is not
// a *transport.Error gets the kind "read".
func errorMessage(err error) protocol.Message {
	var te *transport.Error
	if errors.As(err, &te) {
		return protocol.Message{Kind: protocol.KindError, Err: te.Protocol()}
	}
	return protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: "read", Message: err.Error()}}
}

// TestDecode checks the decoder against every testdata/TestDecode/<case>.sse and its
// <case>.golden.jsonl.
func TestDecode(t *testing.T) {
	transporttest.DecodeGolden(t, filepath.Join("testdata", "TestDecode"), anthropic.New(anthropic.Config{}).NewDecoder, *update)
}

// streamWith builds a minimal stream ending with the given message_delta stop reason.
func streamWith(reason string) []byte {
	return []byte(`event: message_start
data: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":3,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":` + reason + `,"stop_sequence":null},"usage":{"output_tokens":2}}

event: message_stop
data: {"type":"message_stop"}

`)
}

func TestDecodeStopReasons(t *testing.T) {
	tests := map[string]struct {
		give string // the JSON of stop_reason
		want string
	}{
		"end_turn":                      {give: `"end_turn"`, want: "end_turn"},
		"max_tokens":                    {give: `"max_tokens"`, want: "max_tokens"},
		"stop_sequence":                 {give: `"stop_sequence"`, want: "stop_sequence"},
		"tool_use":                      {give: `"tool_use"`, want: "tool_use"},
		"pause_turn":                    {give: `"pause_turn"`, want: "pause_turn"},
		"refusal":                       {give: `"refusal"`, want: "refusal"},
		"model_context_window_exceeded": {give: `"model_context_window_exceeded"`, want: "model_context_window_exceeded"},
		"unknown":                       {give: `"some_future_reason"`, want: "some_future_reason"},
		"null":                          {give: `null`, want: ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := decodeAll(t, bytes.NewReader(streamWith(tt.give)))
			want := []protocol.Message{
				{Kind: protocol.KindText, Text: "hi"},
				{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 3, Output: 2}},
				{Kind: protocol.KindStop, Stop: protocol.StopReason(tt.want)},
			}
			assert.Equal(t, want, got)
		})
	}
}

func TestDecodeProtocolViolations(t *testing.T) {
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{}}}\n\n"
	block := func(i int) string {
		return fmt.Sprintf("data: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n", i)
	}
	tests := map[string]struct {
		give string
		want string
	}{
		"delta for a block never started": {
			give: start + "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
			want: "content_block_delta for block 3, which is not open",
		},
		"stop for a block never started": {
			give: start + "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
			want: "content_block_stop for block 1, which is not open",
		},
		"stop for a block never started, after a start closed an open one": {
			give: start + block(0) + block(0) + "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"data: {\"type\":\"content_block_stop\",\"index\":1}\n\n" + "data: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
			want: "content_block_stop for block 2, which is not open",
		},
		"start without content_block": {
			give: start + "data: {\"type\":\"content_block_start\",\"index\":0}\n\n",
			want: "content_block_start for block 0 without content_block",
		},
		"empty data": {
			give: start + "event: message_stop\ndata:\n\n",
			want: "malformed message_stop event: unexpected end of JSON input: \"\"",
		},
		"empty stream": {
			give: "",
			want: "stream ended without message_stop",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d := anthropic.NewDecoder(strings.NewReader(tt.give))
			for d.Next() {
				assert.NotEqual(t, protocol.KindStop, d.Message().Kind)
			}
			var te *transport.Error
			require.ErrorAs(t, d.Err(), &te)
			assert.Equal(t, protocol.ErrStream, te.Kind)
			assert.Equal(t, tt.want, te.Message)
		})
	}
}

func TestDecodeReadError(t *testing.T) {
	boom := errors.New("connection reset by peer")
	in := io.MultiReader(bytes.NewReader(streamWith(`"end_turn"`)[:300]), iotest.ErrReader(boom))
	d := anthropic.NewDecoder(in)
	for d.Next() {
	}
	assert.ErrorIs(t, d.Err(), boom, "a read error is returned as it is, for the client to classify")
}

func TestDecodeLargeDelta(t *testing.T) {
	text := strings.Repeat("Grüße, 世界! ", 400_000) // 6 MB
	in := streamWith(`"end_turn"`)
	in = bytes.Replace(in, []byte(`"text":"hi"`), []byte(`"text":"`+text+`"`), 1)
	got := decodeAll(t, bytes.NewReader(in))
	require.Len(t, got, 3)
	assert.Equal(t, protocol.KindText, got[0].Kind)
	assert.Equal(t, text, got[0].Text)
}

func TestDecodeMalformedEventClip(t *testing.T) {
	// 40 three-byte characters: a cut at byte 80 falls inside the 27th.
	data := strings.Repeat("€", 40)
	d := anthropic.NewDecoder(strings.NewReader("event: message_start\ndata: " + data + "\n\n"))
	for d.Next() {
	}
	var te *transport.Error
	require.ErrorAs(t, d.Err(), &te)
	assert.Contains(t, te.Message, `: "`+strings.Repeat("€", 25)+`…"`, "the quoted data is cut at a character boundary, within 80 bytes")
	assert.NotContains(t, te.Message, `\x`, "no character is split")
}

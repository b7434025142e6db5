package anthropic_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/anthropic"
)

// textStream builds a realistic response: message_start, one text block of n small
// text deltas (token-sized, some with escapes and multibyte characters, a ping every
// hundred), then the message's end. It returns the stream and its number of events.
func textStream(n int) ([]byte, int) {
	words := []string{"The", " decoder", " reads", " each", " event", ",", " then", " emits", " a", " message", ".\\n",
		" Grüße", " —", " `close(ch)`", " \"quoted\"", " 世界", " tab\\t", " 42", " tokens", " per", " second"}
	var b bytes.Buffer
	events := 0
	b.WriteString(`event: message_start
data: {"type":"message_start","message":{"id":"msg_01HqZ4uT9vWc2sRk7LmNbX3p","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":2510,"cache_creation_input_tokens":0,"cache_read_input_tokens":18000,"output_tokens":1,"service_tier":"standard"}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

`)
	events += 2
	for i := range n {
		if i%100 == 99 {
			b.WriteString("event: ping\ndata: {\"type\": \"ping\"}\n\n")
			events++
		}
		w := words[i%len(words)]
		if i%7 == 3 {
			w += words[(i+5)%len(words)]
		}
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"%s\"}}\n\n", jsonText(w))
		events++
	}
	b.WriteString(`event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5000}}

event: message_stop
data: {"type":"message_stop"}

`)
	return b.Bytes(), events + 3
}

// jsonText escapes the quotes of w for a JSON string; w's backslashes are already escapes.
func jsonText(w string) string {
	return string(bytes.ReplaceAll([]byte(w), []byte(`"`), []byte(`\"`)))
}

// BenchmarkDecode decodes and normalizes a text stream from memory.
func BenchmarkDecode(b *testing.B) {
	in, events := textStream(5000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		d := anthropic.NewDecoder(bytes.NewReader(in))
		texts := 0
		for d.Next() {
			if d.Message().Kind == protocol.KindText {
				texts++
			}
		}
		if d.Err() != nil || texts != 5000 {
			b.Fatalf("texts %d, err %v", texts, d.Err())
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*events), "allocs/event")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}

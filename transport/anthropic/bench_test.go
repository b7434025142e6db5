package anthropic_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/transporttest"
)

// benchStream builds the benchmark stream of transporttest.BenchStream as Anthropic
// sends it: message_start, one text block of token-sized deltas (a ping every
// hundred), a tool_use block whose input comes in fragments, then the message's end.
// It returns the stream and its number of events.
func benchStream() ([]byte, int) {
	var b bytes.Buffer
	events := 0
	ev := func(typ, data string) {
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data)
		events++
	}
	ev("message_start", `{"type":"message_start","message":{"id":"msg_01HqZ4uT9vWc2sRk7LmNbX3p","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":2510,"cache_creation_input_tokens":0,"cache_read_input_tokens":18000,"output_tokens":1,"service_tier":"standard"}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i := range transporttest.BenchDeltas {
		if i%100 == 99 {
			ev("ping", `{"type": "ping"}`)
		}
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+transporttest.BenchText(i)+`"}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"write_file","input":{}}}`)
	for range transporttest.BenchArgFragments {
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"`+transporttest.BenchArgFragment+`"}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5000}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return b.Bytes(), events
}

// BenchmarkDecode decodes and normalizes the benchmark stream from memory.
func BenchmarkDecode(b *testing.B) {
	in, events := benchStream()
	transporttest.BenchDecode(b, in, events, func(r io.Reader) transport.Decoder { return anthropic.NewDecoder(r) })
}

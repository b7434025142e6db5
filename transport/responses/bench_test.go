package responses_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/agentrun/agentrun/transport/responses"
	"github.com/agentrun/agentrun/transport/transporttest"
)

// benchStream builds the benchmark stream of transporttest.BenchStream as the
// Responses API sends it: response.created, a text delta event per delta, a function
// call whose arguments come in fragments, and response.completed. It returns the
// stream and its number of events.
func benchStream() ([]byte, int) {
	var b bytes.Buffer
	seq := 0
	ev := func(typ, rest string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, rest)
		seq++
	}
	ev("response.created", `"response":{"id":"resp_bench","object":"response","status":"in_progress","model":"gpt-5.4","output":[],"usage":null}`)
	ev("response.output_item.added", `"output_index":0,"item":{"id":"msg_bench","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	for i := range transporttest.BenchDeltas {
		ev("response.output_text.delta", `"item_id":"msg_bench","output_index":0,"content_index":0,"delta":"`+transporttest.BenchText(i)+`","logprobs":[],"obfuscation":"x1"`)
	}
	ev("response.output_item.added", `"output_index":1,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"write_file"}`)
	for range transporttest.BenchArgFragments {
		ev("response.function_call_arguments.delta", `"item_id":"fc_1","output_index":1,"delta":"`+transporttest.BenchArgFragment+`","obfuscation":"x1"`)
	}
	ev("response.completed", `"response":{"id":"resp_bench","object":"response","status":"completed","model":"gpt-5.4","output":[],"usage":{"input_tokens":486,"input_tokens_details":{"cached_tokens":384},"output_tokens":52,"total_tokens":538}}`)
	return b.Bytes(), seq
}

// BenchmarkDecode decodes and normalizes the benchmark stream from memory.
func BenchmarkDecode(b *testing.B) {
	in, events := benchStream()
	transporttest.BenchDecode(b, in, events, responses.New(responses.Config{}).NewDecoder)
}

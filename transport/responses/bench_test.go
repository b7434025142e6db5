package responses_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/agentrun/agentrun/transport/responses"
)

// BenchmarkDecode measures decoding a long answer: 2,000 text deltas, one function
// call in 200 argument fragments, and response.completed.
func BenchmarkDecode(b *testing.B) {
	var body bytes.Buffer
	seq := 0
	ev := func(typ, rest string) {
		fmt.Fprintf(&body, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, rest)
		seq++
	}
	ev("response.created", `"response":{"id":"resp_bench","status":"in_progress","output":[]}`)
	for i := range 2000 {
		ev("response.output_text.delta", fmt.Sprintf(`"item_id":"msg_bench","output_index":0,"content_index":0,"delta":"token %d of the answer ","logprobs":[],"obfuscation":"x1"`, i))
	}
	ev("response.output_item.added", `"output_index":1,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"write_file"}`)
	for range 200 {
		ev("response.function_call_arguments.delta", `"item_id":"fc_1","output_index":1,"delta":"aaaaaaaaaaaaaaaaaaaaaaaa"`)
	}
	ev("response.completed", `"response":{"id":"resp_bench","status":"completed","usage":{"input_tokens":486,"input_tokens_details":{"cached_tokens":384},"output_tokens":52}}`)
	in := body.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		d := responses.NewDecoder(bytes.NewReader(in))
		n := 0
		for d.Next() {
			n++
		}
		if d.Err() != nil || n != 2003 {
			b.Fatalf("%d messages, err %v", n, d.Err())
		}
	}
}

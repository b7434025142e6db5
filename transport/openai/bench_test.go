package openai_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/agentrun/agentrun/transport/openai"
)

// BenchmarkDecode measures decoding a long answer: 2,000 text chunks, one tool call in
// 200 argument fragments, usage and [DONE].
func BenchmarkDecode(b *testing.B) {
	var body bytes.Buffer
	const head = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4.1","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,`
	for i := range 2000 {
		fmt.Fprintf(&body, "%s\"delta\":{\"content\":\"token %d of the answer \"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n", head, i)
	}
	fmt.Fprintf(&body, "%s\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"write_file\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n", head)
	for range 200 {
		fmt.Fprintf(&body, "%s\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"aaaaaaaaaaaaaaaaaaaaaaaa\"}}]},\"finish_reason\":null}]}\n\n", head)
	}
	fmt.Fprintf(&body, "%s\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n", head)
	body.WriteString(`data: {"choices":[],"usage":{"prompt_tokens":486,"completion_tokens":52,"total_tokens":538,"prompt_tokens_details":{"cached_tokens":384}}}` + "\n\ndata: [DONE]\n\n")
	in := body.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		d := openai.NewDecoder(bytes.NewReader(in))
		n := 0
		for d.Next() {
			n++
		}
		if d.Err() != nil || n != 2003 {
			b.Fatalf("%d messages, err %v", n, d.Err())
		}
	}
}

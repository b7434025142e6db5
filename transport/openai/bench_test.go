package openai_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/agentrun/agentrun/transport/openai"
	"github.com/agentrun/agentrun/transport/transporttest"
)

// benchStream builds the benchmark stream of transporttest.BenchStream as OpenAI sends
// it: a chunk per text delta, a tool call in fragments, the finish_reason, a usage
// chunk and [DONE]. It returns the stream and its number of events.
func benchStream() ([]byte, int) {
	var b bytes.Buffer
	events := 0
	const head = `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4.1","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,`
	chunk := func(rest string) {
		fmt.Fprintf(&b, "data: %s%s\n\n", head, rest)
		events++
	}
	for i := range transporttest.BenchDeltas {
		chunk(`"delta":{"content":"` + transporttest.BenchText(i) + `"},"logprobs":null,"finish_reason":null}],"usage":null}`)
	}
	chunk(`"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write_file","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}`)
	for range transporttest.BenchArgFragments {
		chunk(`"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + transporttest.BenchArgFragment + `"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`)
	}
	chunk(`"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}`)
	b.WriteString(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4.1","choices":[],"usage":{"prompt_tokens":486,"completion_tokens":52,"total_tokens":538,"prompt_tokens_details":{"cached_tokens":384}}}` + "\n\ndata: [DONE]\n\n")
	return b.Bytes(), events + 2
}

// BenchmarkDecode decodes and normalizes the benchmark stream from memory.
func BenchmarkDecode(b *testing.B) {
	in, events := benchStream()
	transporttest.BenchDecode(b, in, events, openai.New(openai.Config{}).NewDecoder)
}

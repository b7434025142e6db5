package sse_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/transport/sse"
)

// BenchmarkDecoder decodes a stream of small Anthropic-like text deltas.
func BenchmarkDecoder(b *testing.B) {
	var buf bytes.Buffer
	for i := range 4000 {
		fmt.Fprintf(&buf, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"token %d of the answer \"}}\n\n", i)
	}
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		d := sse.NewDecoder(bytes.NewReader(in))
		n := 0
		for d.Next() {
			n += len(d.Event().Data)
		}
		if d.Err() != nil || n == 0 {
			b.Fatal(d.Err())
		}
	}
}

// BenchmarkDecoderCRLines decodes short CR-terminated lines that follow a 1 MB line, so
// the buffer is large: the cost per line must not grow with the buffer.
func BenchmarkDecoderCRLines(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("data: " + strings.Repeat("x", 1<<20) + "\n\n")
	for range 100_000 {
		buf.WriteString("data: y\r\r")
	}
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		d := sse.NewDecoder(bytes.NewReader(in))
		n := 0
		for d.Next() {
			n++
		}
		if d.Err() != nil || n != 100_001 {
			b.Fatal(n, d.Err())
		}
	}
}

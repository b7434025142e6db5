package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/scripted"
)

// anthropicStream renders, with the scripted model's HTTP handler, the Anthropic SSE
// stream of one response: about 64 KB of text in 16-character deltas, then a tool call.
func anthropicStream(tb testing.TB) []byte {
	tb.Helper()
	text := strings.Repeat("The decoder reads each event, then emits a message — Grüße, 世界. ", 1000)
	s, err := scripted.ParseScript("pipeline", []byte("steps:\n  - text: "+quote(text)+"\n    tool_calls:\n      - {name: Bash, input: {command: \"go test ./...\"}}\n"))
	if err != nil {
		tb.Fatal(err)
	}
	h := scripted.New(scripted.Options{Default: s}).Handler()
	body := `{"model":"m","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"go"}]}`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body)))
	if rec.Code != http.StatusOK {
		tb.Fatalf("scripted handler: %d %s", rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes()
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// BenchmarkPipeline measures the whole path of a streamed response: SSE bytes decoded
// and normalized by the Anthropic transport, each message written to a session's
// artifacts (stream.jsonl and events.jsonl, one flushed line each, and transcript.txt).
func BenchmarkPipeline(b *testing.B) {
	stream := anthropicStream(b)
	dir := b.TempDir()
	open := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := f.Close(); err != nil {
				b.Error(err)
			}
		})
		return f
	}
	events, err := sink.OpenEvents(filepath.Join(dir, "events.jsonl"), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	out := sink.Multi(sink.NewStreamJSON(open("stream.jsonl"), protocol.Envelope{}), events,
		sink.NewText(open("transcript.txt"), sink.TextOptions{}))
	defer func() {
		if err := out.Close(); err != nil {
			b.Error(err)
		}
	}()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	msgs := 0
	for b.Loop() {
		d := anthropic.NewDecoder(bytes.NewReader(stream))
		for d.Next() {
			if err := out.Write(d.Message()); err != nil {
				b.Fatal(err)
			}
			msgs++
		}
		if err := d.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "messages/s")
}

// BenchmarkDecodeOnly is the same stream decoded without writing anything.
func BenchmarkDecodeOnly(b *testing.B) {
	stream := anthropicStream(b)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	msgs := 0
	for b.Loop() {
		d := anthropic.NewDecoder(bytes.NewReader(stream))
		for d.Next() {
			msgs++
		}
		if err := d.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "messages/s")
}

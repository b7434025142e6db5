package scripted_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/scripted"
)

// discardWriter is a flushable response writer that keeps nothing.
type discardWriter struct {
	header http.Header
	n      int
}

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
func (w *discardWriter) Flush()                      {}

// benchScript answers with 64 KB of text in 16-rune deltas and a tool call.
func benchScript() (*scripted.Script, int) {
	text := bigText(64 << 10)
	s := &scripted.Script{Steps: []scripted.Step{{Thinking: "Plan.", Text: text, Stop: "tool_use",
		ToolCalls: []scripted.ToolCall{{Name: "Write", Input: `{"path":"a.txt","content":"` + strings.Repeat("x", 1000) + `"}`}}}}}
	return s, len(text)
}

func BenchmarkStream(b *testing.B) {
	s, size := benchScript()
	m := scripted.New(scripted.Options{Default: s})
	req := protocol.Request{Messages: []protocol.Turn{user("go")}}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for range m.Stream(b.Context(), req) {
		}
	}
}

func BenchmarkHandler(b *testing.B) {
	s, size := benchScript()
	m := scripted.New(scripted.Options{Default: s})
	for _, w := range wires {
		b.Run(w.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				dw := &discardWriter{header: http.Header{}}
				m.Handler().ServeHTTP(dw, httptest.NewRequest("POST", w.path, strings.NewReader(w.body)))
				if dw.n < size {
					b.Fatalf("short response: %d bytes", dw.n)
				}
			}
		})
	}
}

package sink_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

var delta = protocol.Message{Kind: protocol.KindText, Text: "Hello, world! "}

func reportEvents(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkEventsWrite measures what one events.jsonl line costs: encoding with seq and
// ts, and one write call to a real file (the flush; fsync happens only on Close).
func BenchmarkEventsWrite(b *testing.B) {
	e, err := sink.OpenEvents(filepath.Join(b.TempDir(), "events.jsonl"), func() time.Time { return t0 })
	if err != nil {
		b.Fatal(err)
	}
	line, _ := protocol.AppendEvent(nil, delta, protocol.Envelope{Seq: 1000, TS: t0})
	b.SetBytes(int64(len(line) + 1))
	b.ReportAllocs()
	for b.Loop() {
		if err := e.Write(delta); err != nil {
			b.Fatal(err)
		}
	}
	reportEvents(b)
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStreamJSONFile writes stream-json lines to a real file, one write each.
func BenchmarkStreamJSONFile(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "stream.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	}()
	s := sink.NewStreamJSON(f, protocol.Envelope{})
	line, _ := protocol.AppendEvent(nil, delta, protocol.Envelope{})
	b.SetBytes(int64(len(line) + 1))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Write(delta); err != nil {
			b.Fatal(err)
		}
	}
	reportEvents(b)
}

// BenchmarkStreamJSONDiscard is the sink's own cost: encoding, locking, one Write.
func BenchmarkStreamJSONDiscard(b *testing.B) {
	s := sink.NewStreamJSON(io.Discard, protocol.Envelope{SessionID: "20260506-120000-1a2b", JobID: "fix-vet"})
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Write(delta); err != nil {
			b.Fatal(err)
		}
	}
	reportEvents(b)
}

// BenchmarkRedactorDelta is the redactor's cost per text delta with two secrets.
func BenchmarkRedactorDelta(b *testing.B) {
	r := sink.NewRedactor(fakeSink{}, []string{secret, "another-secret-value"})
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Write(delta); err != nil {
			b.Fatal(err)
		}
	}
	reportEvents(b)
}

// BenchmarkTextSession renders the realistic session to io.Discard.
func BenchmarkTextSession(b *testing.B) {
	msgs := session()
	b.ReportAllocs()
	for b.Loop() {
		s := sink.NewText(io.Discard, sink.TextOptions{Prefix: "[fix-vet] "})
		for _, m := range msgs {
			if err := s.Write(m); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

package protocol_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// BenchmarkRESP encodes a 4 KiB text message and decodes it again; MB/s counts the
// frame's bytes once per round trip.
func BenchmarkRESP(b *testing.B) {
	m := protocol.Message{Kind: protocol.KindText, Text: strings.Repeat("The quick brown fox jumps. ", 4096/27+1)[:4096]}
	var pipe bytes.Buffer
	dec := protocol.NewRESPDecoder(&pipe)
	var frame []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(encodeAll(b, m))))
	for b.Loop() {
		var err error
		frame, err = protocol.AppendRESP(frame[:0], m)
		if err != nil {
			b.Fatal(err)
		}
		pipe.Write(frame)
		if !dec.Next() {
			b.Fatal(dec.Err())
		}
		if len(dec.Message().Text) != len(m.Text) {
			b.Fatal("short message")
		}
	}
}

// BenchmarkRESPDecode decodes a stream of 4 KiB text frames.
func BenchmarkRESPDecode(b *testing.B) {
	m := protocol.Message{Kind: protocol.KindText, Text: strings.Repeat("x", 4096)}
	const n = 256
	msgs := make([]protocol.Message, n)
	for i := range msgs {
		msgs[i] = m
	}
	stream := encodeAll(b, msgs...)
	b.ReportAllocs()
	b.SetBytes(int64(len(stream) / n))
	var r bytes.Reader
	var dec *protocol.RESPDecoder
	i := 0
	for b.Loop() {
		if i%n == 0 {
			r.Reset(stream)
			dec = protocol.NewRESPDecoder(&r)
		}
		if !dec.Next() {
			b.Fatal(dec.Err())
		}
		i++
	}
}

// BenchmarkAppendEvent encodes small text deltas as stream-json lines.
func BenchmarkAppendEvent(b *testing.B) {
	tests := map[string]struct {
		m   protocol.Message
		env protocol.Envelope
	}{
		"text delta": {m: protocol.Message{Kind: protocol.KindText, Text: "Hello, world! "}},
		"text delta with envelope": {m: protocol.Message{Kind: protocol.KindText, Text: "Hello, world! "},
			env: protocol.Envelope{Seq: 1234, TS: time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC), SessionID: "20260506-120000-1a2b", JobID: "fix-vet"}},
		"tool call": {m: protocol.Message{Kind: protocol.KindToolCall,
			Call: protocol.ToolCall{Name: "Bash", ID: "toolu_01", Input: `{"command":"go test ./...","timeout":600}`}}},
	}
	for name, tt := range tests {
		b.Run(name, func(b *testing.B) {
			var buf []byte
			line, _ := protocol.AppendEvent(nil, tt.m, tt.env)
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				buf, err = protocol.AppendEvent(buf[:0], tt.m, tt.env)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkEventReader reads stream.jsonl lines of small text deltas.
func BenchmarkEventReader(b *testing.B) {
	const n = 1024
	var stream []byte
	for range n {
		stream, _ = protocol.AppendEvent(stream, protocol.Message{Kind: protocol.KindText, Text: "Hello, world! "}, protocol.Envelope{Seq: 1})
		stream = append(stream, '\n')
	}
	b.SetBytes(int64(len(stream) / n))
	b.ReportAllocs()
	var r bytes.Reader
	var er *protocol.EventReader
	i := 0
	for b.Loop() {
		if i%n == 0 {
			r.Reset(stream)
			er = protocol.NewEventReader(&r)
		}
		if !er.Next() {
			b.Fatal(er.Err())
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkFrameDecode decodes the worker boundary's frames with a new decoder each
// time: a small request, whose B/op is the memory a new decoder holds with one small
// frame read (each running session's worker client keeps one for its life), and a reply
// of one 1 MiB field.
func BenchmarkFrameDecode(b *testing.B) {
	for name, frame := range map[string][]byte{
		"small frame": protocol.AppendFrame(nil, "CALL", "t1", "Bash", `{"command":"go test ./..."}`),
		"1 MiB field": protocol.AppendFrame(nil, "RESULT", "t1", strings.Repeat("x", 1<<20), "0"),
	} {
		b.Run(name, func(b *testing.B) {
			var r bytes.Reader
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(frame)
				d := protocol.NewFrameDecoder(&r, protocol.DefaultMaxFrame)
				if !d.Next() {
					b.Fatal(d.Err())
				}
			}
		})
	}
}

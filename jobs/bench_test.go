package jobs

import (
	"os"
	"testing"
)

// BenchmarkParseFull parses testdata/valid/full.yaml (8 sessions, every key).
func BenchmarkParseFull(b *testing.B) {
	data, err := os.ReadFile("testdata/valid/full.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("testdata/valid/full.yaml", data, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessions expands a job into 2000 sessions (a 10×10×2 matrix, 10 repeats).
func BenchmarkSessions(b *testing.B) {
	data := []byte(doc(
		"version: 1",
		"defaults: {model: m, env: {A: b}, budget: {max_cost_usd: 1}}",
		"jobs:",
		"  - id: a",
		"    prompt: 'Solve {{ .matrix.a }} and {{ .matrix.b }} with {{ .matrix.model }}, try {{ .repeat }}.'",
		"    repeat: 10",
		"    matrix: {a: [1,2,3,4,5,6,7,8,9,10], b: [1,2,3,4,5,6,7,8,9,10], model: [x, y]}",
	))
	s, err := Parse("bench.yaml", data, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		sessions, err := s.Sessions()
		if err != nil || len(sessions) != 2000 {
			b.Fatal(len(sessions), err)
		}
	}
}

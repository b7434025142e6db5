package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/policy"
)

// BenchmarkCapture measures capturing command output into the bounded head+tail
// buffer (32 KiB writes, as the pipe reader does).
func BenchmarkCapture(b *testing.B) {
	chunk := []byte(strings.Repeat("é€😀\n", 32<<10/10))
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	c := newCapture(DefaultMaxOutput)
	for b.Loop() {
		_, _ = c.Write(chunk)
	}
}

// BenchmarkTruncate measures cutting 10 MB of text to the default cap.
func BenchmarkTruncate(b *testing.B) {
	s := strings.Repeat("é€😀\n", 1_000_000)
	b.ReportAllocs()
	for b.Loop() {
		_ = Truncate(s, DefaultMaxOutput)
	}
}

// BenchmarkGrep measures searching a workspace of 200 files of 200 lines each.
func BenchmarkGrep(b *testing.B) {
	env := newEnv(b, policy.DefaultMode)
	files := map[string]string{".gitignore": "*.log\n"}
	var body strings.Builder
	for i := range 200 {
		fmt.Fprintf(&body, "line %d of some source text with a few words\n", i)
	}
	for i := range 200 {
		files[fmt.Sprintf("d%d/f%d.go", i%10, i)] = body.String() + "// NEEDLE\n"
	}
	writeTree(b, env.Workspace, files)
	input := json.RawMessage(`{"pattern":"NEEDLE","output_mode":"count"}`)
	b.SetBytes(int64(200 * body.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if res := (Grep{}).Run(context.Background(), Call{Input: input, Env: env}); res.IsError {
			b.Fatal(res.Content)
		}
	}
}

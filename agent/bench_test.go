package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/transport/scripted"
)

// twentyTurns is a 20-step script using the in-process file tools.
func twentyTurns() string {
	var b strings.Builder
	b.WriteString("steps:\n")
	for i := 0; i < 19; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "  - text: \"Writing file %d.\"\n    tool_calls:\n      - name: Write\n        input: {path: f%d.go, content: \"package main\\n\\nfunc f%d() int { return %d }\\n\"}\n", i, i, i, i)
		case 1:
			fmt.Fprintf(&b, "  - text: \"Reading it back.\"\n    tool_calls:\n      - name: Read\n        input: {path: f%d.go}\n", i-1)
		case 2:
			fmt.Fprintf(&b, "  - text: \"Editing it.\"\n    tool_calls:\n      - name: Edit\n        input: {path: f%d.go, old_string: \"return %d\", new_string: \"return %d + 1\"}\n", i-2, i-2, i-2)
		}
	}
	b.WriteString("  - text: \"All done.\"\n")
	return b.String()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSession20Turns runs one 20-turn session per iteration against the in-process
// scripted model, with real tools in a temporary workspace and every artifact written
// (stream.jsonl, events.jsonl, transcript.txt, messages.jsonl) as the runner writes them:
// events.jsonl not synced at its close, no stats.json (the runner's result.json has the
// counters, and is not written here).
func BenchmarkSession20Turns(b *testing.B) {
	s, err := scripted.ParseScript("bench", []byte(twentyTurns()))
	require.NoError(b, err)
	model := scripted.New(scripted.Options{Default: s})
	root := b.TempDir()
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		dir := filepath.Join(root, fmt.Sprint(i))
		ws := filepath.Join(dir, "ws")
		require.NoError(b, os.MkdirAll(ws, 0o755))
		stream, err := os.Create(filepath.Join(dir, "stream.jsonl"))
		require.NoError(b, err)
		transcript, err := os.Create(filepath.Join(dir, "transcript.txt"))
		require.NoError(b, err)
		events, err := sink.OpenEvents(filepath.Join(dir, "events.jsonl"), time.Now)
		require.NoError(b, err)
		events.DeferSync()
		out := sink.Multi(sink.NewStreamJSON(stream, protocol.Envelope{}), events, sink.NewText(transcript, sink.TextOptions{}))
		sess, err := agent.New(agent.Config{Workspace: ws, Tools: []string{"Read", "Write", "Edit"}},
			agent.Deps{Provider: model, Sink: out, Store: &agent.DirStore{Dir: dir, Files: sink.NewFiles(nil), NoStats: true}})
		require.NoError(b, err)
		require.NoError(b, sess.Start())
		o := sess.Run(b.Context(), "write some files")
		if o.End != agent.EndCompleted || o.Turns != 20 {
			b.Fatalf("session ended %v after %d turns: %+v", o.End, o.Turns, o.Err)
		}
		require.NoError(b, out.Close())
		require.NoError(b, stream.Close())
		require.NoError(b, transcript.Close())
	}
	b.StopTimer()
	perTurn := float64(cpuTime()-cpu0) / float64(b.N) / 20
	b.ReportMetric(perTurn/1e3, "cpu-µs/turn")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20/1e3, "wall-µs/turn")
}

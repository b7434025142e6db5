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
// counters, and is not written here). Beside each session but the first it measures the
// disk's floor: the same folders and files made by a bare loop (recreate), whose CPU it
// reports per turn of the session and takes out of the session's.
func BenchmarkSession20Turns(b *testing.B) {
	s, err := scripted.ParseScript("bench", []byte(twentyTurns()))
	require.NoError(b, err)
	model := scripted.New(scripted.Options{Default: s})
	root := b.TempDir()
	var layout []entry // what the first session left, which the floor re-creates
	var floor time.Duration
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		// The floor's files go beside the sessions' folders, where the file system
		// places them alike, before the session in one iteration and after it in the
		// next: a file system whose every new file costs more than the last one before
		// it charges both alike.
		floorDir := filepath.Join(root, fmt.Sprint("floor", i))
		if layout != nil && i%2 == 0 {
			floor += recreate(b, floorDir, layout)
		}
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
		switch {
		case layout == nil:
			layout = layoutOf(b, dir)
		case i%2 == 1:
			floor += recreate(b, floorDir, layout)
		}
	}
	b.StopTimer()
	// The floor's CPU is counted in cpuTime too: it is taken out of the session's. It
	// ran in b.N-1 iterations.
	perTurn := float64(cpuTime()-cpu0-floor) / float64(b.N) / 20
	b.ReportMetric(perTurn/1e3, "cpu-µs/turn")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20/1e3, "wall-µs/turn")
	if b.N > 1 {
		perTurnFloor := float64(floor) / float64(b.N-1) / 20
		b.ReportMetric(perTurnFloor/1e3, "disk-floor-cpu-µs/turn")
		b.ReportMetric((perTurn-perTurnFloor)/1e3, "above-floor-cpu-µs/turn")
	}
}

// entry is a folder or a file (with its size) that a session left, by its path in the
// session's folder.
type entry struct {
	rel  string
	dir  bool
	size int64
}

// layoutOf lists the folders and files under dir, parents first.
func layoutOf(tb testing.TB, dir string) []entry {
	var out []entry
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, entry{rel: rel, dir: d.IsDir(), size: info.Size()})
		return nil
	})
	require.NoError(tb, err)
	return out
}

// recreate makes the folders and files of layout under dir, each file in one write of
// its size: what the file system charges any program that leaves what a session
// leaves, without agentrun (the disk's floor of the session's CPU). It returns the
// process's CPU time meanwhile, the kernel's included, and the Go runtime's on its
// behalf: where a system call is slow (a file created on a disk that searches for a
// free inode) the runtime hands its processor to another thread and wakes it again,
// which a count of the calling thread's time alone left to the session.
func recreate(tb testing.TB, dir string, layout []entry) time.Duration {
	start := cpuTime()
	for _, e := range layout {
		path := filepath.Join(dir, e.rel)
		if e.dir {
			require.NoError(tb, os.Mkdir(path, 0o755))
			continue
		}
		require.NoError(tb, os.WriteFile(path, make([]byte, e.size), 0o644))
	}
	return cpuTime() - start
}

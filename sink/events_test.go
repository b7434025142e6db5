package sink_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// clock returns a fake clock that starts at start and moves by step on every call.
func clock(start time.Time, step time.Duration) func() time.Time {
	now := start
	return func() time.Time {
		t := now
		now = now.Add(step)
		return t
	}
}

var t0 = time.Date(2026, 5, 6, 14, 0, 0, 0, time.FixedZone("CEST", 2*3600))

// readEventsFile reads every event of the file at path with its envelope.
func readEventsFile(t *testing.T, path string) ([]protocol.Message, []protocol.Envelope) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	er := protocol.NewEventReader(f)
	var msgs []protocol.Message
	var envs []protocol.Envelope
	for er.Next() {
		msgs = append(msgs, er.Message())
		envs = append(envs, er.Envelope())
	}
	require.NoError(t, er.Err())
	return msgs, envs
}

func writeAll(t *testing.T, s sink.Sink, msgs ...protocol.Message) {
	t.Helper()
	for _, m := range msgs {
		require.NoError(t, s.Write(m))
	}
}

func TestEventsSeqAndTS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	e, err := sink.OpenEvents(path, clock(t0, 250*time.Millisecond))
	require.NoError(t, err)
	writeAll(t, e, session()...)
	require.NoError(t, e.Close())

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.HasSuffix(raw, []byte("\n")))
	first := strings.SplitN(string(raw), "\n", 2)[0]
	assert.True(t, strings.HasPrefix(first, `{"type":"session_start","seq":1,`), "first line %s", first)
	second := strings.SplitN(string(raw), "\n", 3)[1]
	assert.True(t, strings.HasPrefix(second, `{"type":"thinking","seq":2,"ts":"2026-05-06T12:00:00.250Z",`), "second line %s", second)

	msgs, envs := readEventsFile(t, path)
	require.Len(t, msgs, len(session()))
	for i, env := range envs {
		assert.Equal(t, int64(i+1), env.Seq)
		if msgs[i].Kind != protocol.KindSessionStart {
			want := t0.Add(time.Duration(i) * 250 * time.Millisecond)
			assert.True(t, want.Equal(env.TS), "line %d ts %v, want %v", i+1, env.TS, want)
			assert.Equal(t, time.UTC, env.TS.Location())
		}
	}
}

func TestEventsResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	e, err := sink.OpenEvents(path, clock(t0, time.Second))
	require.NoError(t, err)
	writeAll(t, e, protocol.Message{Kind: protocol.KindText, Text: "a"}, protocol.Message{Kind: protocol.KindText, Text: "b"})
	require.NoError(t, e.Close())

	e, err = sink.OpenEvents(path, clock(t0.Add(time.Hour), time.Second))
	require.NoError(t, err)
	writeAll(t, e, protocol.Message{Kind: protocol.KindText, Text: "c"})
	require.NoError(t, e.Close())

	msgs, envs := readEventsFile(t, path)
	require.Len(t, msgs, 3)
	assert.Equal(t, []string{"a", "b", "c"}, []string{msgs[0].Text, msgs[1].Text, msgs[2].Text})
	assert.Equal(t, []int64{1, 2, 3}, []int64{envs[0].Seq, envs[1].Seq, envs[2].Seq})
	assert.True(t, t0.Add(time.Hour).Equal(envs[2].TS))
}

func TestEventsOpenExisting(t *testing.T) {
	const (
		line5 = `{"type":"text","seq":5,"ts":"2026-05-06T12:00:00.000Z","content":"five"}`
		line6 = `{"type":"text","seq":6,"ts":"2026-05-06T12:00:00.000Z","content":"six"}`
	)
	tests := map[string]struct {
		give     string
		wantKept string // what is left of the old file
		wantSeq  int64  // the seq of the first new line
	}{
		"empty file":            {give: "", wantKept: "", wantSeq: 1},
		"whole lines":           {give: line5 + "\n" + line6 + "\n", wantKept: line5 + "\n" + line6 + "\n", wantSeq: 7},
		"torn last line":        {give: line5 + "\n" + line6[:20], wantKept: line5 + "\n", wantSeq: 6},
		"complete line, no LF":  {give: line5 + "\n" + line6, wantKept: line5 + "\n", wantSeq: 6},
		"only a torn line":      {give: line5[:30], wantKept: "", wantSeq: 1},
		"last line without seq": {give: line5 + "\n" + `{"type":"stop"}` + "\n", wantKept: line5 + "\n" + `{"type":"stop"}` + "\n", wantSeq: 6},
		"garbage last line":     {give: line6 + "\nnot json\n", wantKept: line6 + "\nnot json\n", wantSeq: 7},
		"seq far back": {give: line5 + "\n" + strings.Repeat(`{"type":"stop"}`+"\n", 5000) + "torn",
			wantKept: line5 + "\n" + strings.Repeat(`{"type":"stop"}`+"\n", 5000), wantSeq: 6},
		"no seq at all": {give: `{"type":"text","content":"x"}` + "\n\n", wantKept: `{"type":"text","content":"x"}` + "\n\n", wantSeq: 1},
		"long lines": {give: line5 + "\n" + `{"type":"text","content":"` + strings.Repeat("x", 100<<10) + `"}` + "\n",
			wantKept: line5 + "\n" + `{"type":"text","content":"` + strings.Repeat("x", 100<<10) + `"}` + "\n", wantSeq: 6},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tt.give), 0o644))
			e, err := sink.OpenEvents(path, clock(t0, time.Second))
			require.NoError(t, err)
			writeAll(t, e, protocol.Message{Kind: protocol.KindStop, Stop: "end_turn"})
			require.NoError(t, e.Close())

			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(raw), tt.wantKept), "old content not kept")
			added := strings.TrimPrefix(string(raw), tt.wantKept)
			m, env, err := protocol.ParseEvent([]byte(strings.TrimSuffix(added, "\n")))
			require.NoError(t, err, "new line %q", added)
			assert.Equal(t, protocol.KindStop, m.Kind)
			assert.Equal(t, tt.wantSeq, env.Seq)
			assert.Equal(t, 1, strings.Count(added, "\n"))
		})
	}
}

func TestEventsOpenError(t *testing.T) {
	_, err := sink.OpenEvents(filepath.Join(t.TempDir(), "missing", "events.jsonl"), nil)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestEventsWriteErrorIsSticky(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	e, err := sink.OpenEvents("/dev/full", nil)
	require.NoError(t, err)
	err = e.Write(protocol.Message{Kind: protocol.KindText, Text: "a"})
	require.Error(t, err, "writing to a full device")
	assert.Contains(t, err.Error(), "write events")
	assert.Equal(t, err, e.Write(protocol.Message{Kind: protocol.KindText, Text: "b"}), "the first error sticks")
	assert.ErrorIs(t, e.Close(), err, "Close reports the failed write")
}

func TestEventsClosed(t *testing.T) {
	e, err := sink.OpenEvents(filepath.Join(t.TempDir(), "events.jsonl"), nil)
	require.NoError(t, err)
	require.NoError(t, e.Close())
	assert.NoError(t, e.Close())
	assert.ErrorIs(t, e.Write(protocol.Message{Kind: protocol.KindText}), sink.ErrClosed)
}

func TestEventsInvalidMessage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	e, err := sink.OpenEvents(path, nil)
	require.NoError(t, err)
	assert.Error(t, e.Write(protocol.Message{}))
	writeAll(t, e, protocol.Message{Kind: protocol.KindText, Text: "ok"})
	require.NoError(t, e.Close())
	_, envs := readEventsFile(t, path)
	require.Len(t, envs, 1)
	assert.Equal(t, int64(1), envs[0].Seq, "a message that was not written takes no seq")
}

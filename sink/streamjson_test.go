package sink_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

func TestStreamJSONLines(t *testing.T) {
	var w flushWriter
	s := sink.NewStreamJSON(&w, protocol.Envelope{})
	msgs := session()
	for _, m := range msgs {
		require.NoError(t, s.Write(m))
	}
	require.NoError(t, s.Close())

	assert.Len(t, w.writes, len(msgs), "one Write per line")
	assert.Equal(t, len(msgs)+1, w.flushes, "a flush per line and one on Close")
	for i, line := range w.writes {
		require.True(t, strings.HasSuffix(line, "\n"), "line %d does not end in a newline", i)
		body := strings.TrimSuffix(line, "\n")
		assert.NotContains(t, body, "\n")
		assert.True(t, json.Valid([]byte(body)), "line %d is not JSON: %s", i, body)
		assert.True(t, utf8.ValidString(body), "line %d is not UTF-8", i)
		assert.True(t, strings.HasPrefix(body, `{"type":`), "line %d does not start with type: %s", i, body)
		assert.NotContains(t, body, `"seq"`, "stream-json has no seq")
	}

	// The lines read back as the session.
	er := protocol.NewEventReader(&w.buf)
	var got []protocol.Kind
	for er.Next() {
		got = append(got, er.Message().Kind)
	}
	require.NoError(t, er.Err())
	want := make([]protocol.Kind, len(msgs))
	for i, m := range msgs {
		want[i] = m.Kind
	}
	assert.Equal(t, want, got)
}

func TestStreamJSONEnvelope(t *testing.T) {
	var buf bytes.Buffer
	s := sink.NewStreamJSON(&buf, protocol.Envelope{Seq: 9, SessionID: "s1", JobID: "fix-vet"})
	require.NoError(t, s.Write(protocol.Message{Kind: protocol.KindText, Text: "hi"}))
	require.NoError(t, s.Write(protocol.Message{Kind: protocol.KindStop, Stop: "end_turn"}))
	require.NoError(t, s.Close())
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, lines, 2)
	assert.JSONEq(t, `{"type":"text","session_id":"s1","job_id":"fix-vet","content":"hi"}`, lines[0])
	assert.JSONEq(t, `{"type":"stop","session_id":"s1","job_id":"fix-vet","reason":"end_turn"}`, lines[1])
}

func TestStreamJSONSync(t *testing.T) {
	var w syncWriter
	s := sink.NewStreamJSON(&w, protocol.Envelope{})
	require.NoError(t, s.Write(protocol.Message{Kind: protocol.KindText, Text: "a"}))
	require.NoError(t, s.Write(protocol.Message{Kind: protocol.KindText, Text: "b"}))
	assert.Equal(t, 2, w.syncs)
}

func TestStreamJSONWriteError(t *testing.T) {
	w := flushWriter{err: errDisk}
	s := sink.NewStreamJSON(&w, protocol.Envelope{})
	err := s.Write(protocol.Message{Kind: protocol.KindText, Text: "a"})
	assert.ErrorIs(t, err, errDisk)
	assert.Error(t, s.Write(protocol.Message{}), "invalid kind")
}

func TestStreamJSONClosed(t *testing.T) {
	var buf bytes.Buffer
	s := sink.NewStreamJSON(&buf, protocol.Envelope{})
	require.NoError(t, s.Close())
	assert.NoError(t, s.Close(), "second Close")
	assert.ErrorIs(t, s.Write(protocol.Message{Kind: protocol.KindText}), sink.ErrClosed)
	assert.Empty(t, buf.String())
}

// TestStreamJSONConcurrent has many sessions write through one shared StreamJSON, and
// others through their own StreamJSON on one SyncWriter, as a run's stdout does. Run
// with -race: every line must come out whole.
func TestStreamJSONConcurrent(t *testing.T) {
	var out bytes.Buffer
	shared := sink.NewSyncWriter(&out)
	common := sink.NewStreamJSON(shared, protocol.Envelope{})
	const sessions, perSession = 8, 200
	var wg sync.WaitGroup
	for i := range sessions {
		own := sink.NewStreamJSON(shared, protocol.Envelope{SessionID: fmt.Sprintf("s%d", i), JobID: "job"})
		wg.Go(func() {
			for j := range perSession {
				text := fmt.Sprintf("session %d delta %d %s", i, j, strings.Repeat("x", j))
				assert.NoError(t, own.Write(protocol.Message{Kind: protocol.KindText, Text: text}))
				assert.NoError(t, common.Write(protocol.Message{Kind: protocol.KindThinking, Text: text}))
			}
		})
	}
	wg.Wait()

	counts := map[string]int{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		m, env, err := protocol.ParseEvent(sc.Bytes())
		require.NoError(t, err, "line %q", sc.Text())
		counts[m.Kind.EventType()+"/"+env.SessionID]++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, sessions*perSession, counts["thinking/"])
	for i := range sessions {
		assert.Equal(t, perSession, counts[fmt.Sprintf("text/s%d", i)])
	}
}

package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/transport/scripted"
)

// script builds a scripted-model script from YAML.
func script(t testing.TB, yaml string) *scripted.Script {
	t.Helper()
	s, err := scripted.ParseScript("test.yaml", []byte(yaml))
	require.NoError(t, err)
	return s
}

// TestScriptedSessionWritesReadsEditsRuns drives real tools in a temporary workspace
// with the scripted model and checks the files and the stream.
func TestScriptedSessionWritesReadsEditsRuns(t *testing.T) {
	ws := t.TempDir()
	s := script(t, `
steps:
  - text: "Writing the script."
    tool_calls:
      - name: Write
        input: {path: hello.sh, content: "echo hello world\n"}
  - tool_calls:
      - name: Read
        input: {path: hello.sh}
  - tool_calls:
      - name: Edit
        input: {path: hello.sh, old_string: "hello world", new_string: "hello agentrun"}
  - tool_calls:
      - name: Bash
        input: {command: "bash hello.sh > out.txt && cat out.txt"}
  - text: "Done."
`)
	rec := &recorder{}
	streamPath := filepath.Join(t.TempDir(), "stream.jsonl")
	f, err := os.Create(streamPath)
	require.NoError(t, err)
	stream := sink.NewStreamJSON(f, protocol.Envelope{})
	sess, err := agent.New(agent.Config{Workspace: ws, Tools: []string{"Read", "Write", "Edit", "Bash"}},
		agent.Deps{Provider: scripted.New(scripted.Options{Default: s}), Sink: sink.Multi(rec, stream)})
	require.NoError(t, err)
	require.NoError(t, sess.Start())
	out := sess.Run(t.Context(), "make a greeting script")
	require.Equal(t, agent.EndCompleted, out.End, "%+v", out.Err)
	require.NoError(t, stream.Close())
	require.NoError(t, f.Close())
	assert.Equal(t, 5, out.Turns)
	b, err := os.ReadFile(filepath.Join(ws, "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello agentrun\n", string(b))
	validWindow(t, sess.Conversation())

	// stream.jsonl is complete: every line is valid JSON and parses back to the message
	// the session emitted, in order.
	raw, err := os.ReadFile(streamPath)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	require.Len(t, lines, len(rec.msgs))
	for i, line := range lines {
		require.True(t, json.Valid([]byte(line)), line)
		m, _, err := protocol.ParseEvent([]byte(line))
		require.NoError(t, err, line)
		assert.Equal(t, rec.msgs[i].Kind, m.Kind, "line %d", i+1)
	}
	assert.Contains(t, lines[0], `"type":"session_start"`)
	assert.Contains(t, lines[len(lines)-1], `"type":"stop"`)
	calls, results := 0, 0
	for _, m := range rec.msgs {
		switch m.Kind {
		case protocol.KindToolCall:
			calls++
		case protocol.KindToolResult:
			results++
			assert.False(t, m.Result.IsError, m.Result.Content)
		default:
			// Other kinds are not under test.
		}
	}
	assert.Equal(t, 4, calls)
	assert.Equal(t, 4, results)
}

// bigSteps is a script of n steps, each writing and reading a file of size bytes.
func bigSteps(n, size int) string {
	var b strings.Builder
	b.WriteString("steps:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - text: \"step %d\"\n    tool_calls:\n      - name: Write\n        input: {path: f%d.txt, content: %q}\n      - name: Read\n        input: {path: f%d.txt}\n",
			i, i, strings.Repeat(fmt.Sprintf("line %d of a long file\n", i), size/24), i)
	}
	b.WriteString("  - text: \"All files written.\"\n")
	return b.String()
}

// TestCompactionEndToEnd runs a long session against a tiny context budget: it must
// compact at least twice and still finish with a valid window.
func TestCompactionEndToEnd(t *testing.T) {
	ws := t.TempDir()
	rec := &recorder{}
	store := &agent.DirStore{Dir: t.TempDir(), Files: sink.NewFiles(nil)}
	sess, err := agent.New(agent.Config{Workspace: ws, Tools: []string{"Read", "Write"}, MaxTurns: 40,
		Compaction: agent.CompactConfig{MaxContext: 6000}},
		agent.Deps{Provider: scripted.New(scripted.Options{Default: script(t, bigSteps(12, 2400))}), Sink: rec, Store: store})
	require.NoError(t, err)
	out := sess.Run(t.Context(), "write the files")
	require.Equal(t, agent.EndCompleted, out.End, "%+v", out.Err)
	assert.Equal(t, "All files written.", out.FinalText)

	compactions, compactUsage := 0, 0
	for _, m := range rec.msgs {
		switch {
		case m.Kind == protocol.KindContextUpdate:
			compactions++
			assert.Equal(t, "compact", m.Context.Kind)
		case m.Kind == protocol.KindUsage && m.UsageKind == "compact":
			compactUsage++
		case m.Kind == protocol.KindError:
			t.Errorf("unexpected error event: %+v", m.Err)
		}
	}
	assert.GreaterOrEqual(t, compactions, 2, "the session compacts at least twice")
	assert.Equal(t, compactions, compactUsage, "every compaction reports its usage")
	assert.Equal(t, compactions, sess.Stats().CompactRequests)
	conv := sess.Conversation()
	validWindow(t, conv)

	// What is on disk is the same window, with the summary beside it.
	st, err := store.Load()
	require.NoError(t, err)
	assert.Len(t, st.Turns, len(conv))
	assert.Contains(t, st.Summary, "Task focus:")
}

// failingSummary answers compaction requests with an error and everything else with
// the script.
type failingSummary struct{ *scripted.Model }

func (f failingSummary) Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
	last := req.Messages[len(req.Messages)-1]
	for _, b := range last.Blocks {
		if strings.Contains(b.Text, protocol.CompactMarker) {
			return func(yield func(protocol.Message) bool) {
				yield(protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrServer, Message: "HTTP 500"}})
			}
		}
	}
	return f.Model.Stream(ctx, req)
}

func TestCompactionFailureContinues(t *testing.T) {
	rec := &recorder{}
	p := failingSummary{scripted.New(scripted.Options{Default: script(t, bigSteps(6, 2400))})}
	sess, err := agent.New(agent.Config{Workspace: t.TempDir(), Tools: []string{"Read", "Write"},
		Compaction: agent.CompactConfig{MaxContext: 6000}}, agent.Deps{Provider: p, Sink: rec})
	require.NoError(t, err)
	out := sess.Run(t.Context(), "write the files")
	require.Equal(t, agent.EndCompleted, out.End, "a failed summary does not end the session")
	var compactErrors int
	for _, m := range rec.msgs {
		if m.Kind == protocol.KindError && m.Err.Kind == protocol.ErrCompact {
			compactErrors++
		}
		assert.NotEqual(t, protocol.KindContextUpdate, m.Kind)
	}
	assert.Positive(t, compactErrors)
	validWindow(t, sess.Conversation())
}

// TestResumeAfterKillBetweenCallAndResult simulates a process killed while a tool ran:
// messages.jsonl ends with the assistant's tool use. The resumed session gets an
// "interrupted" result for it and continues.
func TestResumeAfterKillBetweenCallAndResult(t *testing.T) {
	dir := t.TempDir()
	store := &agent.DirStore{Dir: dir, Files: sink.NewFiles(nil)}
	first := []protocol.Turn{
		protocol.UserText("write a file"),
		{Role: protocol.RoleAssistant, Blocks: []protocol.Block{
			{Type: protocol.BlockText, Text: "Writing."},
			{Type: protocol.BlockToolUse, ID: "tc_0_0", Name: "Write", Input: json.RawMessage(`{"path":"a.txt","content":"x"}`)}}},
	}
	require.NoError(t, store.Append(first))
	// A torn last line, as a kill in the middle of a write leaves.
	f, err := os.OpenFile(filepath.Join(dir, agent.MessagesFile), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"role":"user","content":[{"type":"tool_res`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	p := &canned{responses: [][]protocol.Message{{text("Resumed and done."), stop("end_turn")}}}
	sess, err := agent.New(agent.Config{Workspace: t.TempDir(), Tools: []string{"Write"}},
		agent.Deps{Provider: p, Sink: &recorder{}, Store: store})
	require.NoError(t, err)
	out := sess.Run(t.Context(), "carry on")
	require.Equal(t, agent.EndCompleted, out.End)
	conv := sess.Conversation()
	validWindow(t, conv)
	require.Len(t, conv, 4)
	assert.Equal(t, agent.InterruptedResult, conv[2].Blocks[0].Content)
	assert.True(t, conv[2].Blocks[0].IsError)
	assert.Equal(t, "carry on", conv[2].Blocks[1].Text, "the new prompt joins the results turn")
	// The request sent after the resume was valid too.
	require.Len(t, p.requests, 1)
	validWindow(t, p.requests[0].Messages)

	// And the store now holds the repaired window.
	st, err := store.Load()
	require.NoError(t, err)
	assert.Len(t, st.Turns, 4)
}

// TestResumeContinuesTotals checks that a resumed session keeps its conversation and
// counters, and that its outcome reports this invocation's usage, like its turns.
func TestResumeContinuesTotals(t *testing.T) {
	dir := t.TempDir()
	ws := t.TempDir()
	run := func(prompt string) (*agent.Session, agent.Outcome) {
		p := &canned{responses: [][]protocol.Message{{text("ok " + prompt), usage(100, 10), stop("end_turn")}}}
		sess, err := agent.New(agent.Config{Workspace: ws}, agent.Deps{Provider: p, Sink: &recorder{}, Store: &agent.DirStore{Dir: dir, Files: sink.NewFiles(nil)}})
		require.NoError(t, err)
		return sess, sess.Run(t.Context(), prompt)
	}
	run("one")
	sess, out := run("two")
	assert.Equal(t, protocol.Usage{Input: 100, Output: 10}, out.Usage, "this invocation's usage")
	assert.Equal(t, 1, out.Turns, "this invocation's turns")
	assert.Equal(t, protocol.Usage{Input: 200, Output: 20}, sess.Stats().Usage(), "the session's totals")
	assert.Equal(t, 2, sess.Stats().UserTurns)
	assert.Len(t, sess.Conversation(), 4)
	validWindow(t, sess.Conversation())
}

// summaryRequests records the compaction requests it passes on to the script.
type summaryRequests struct {
	*scripted.Model
	reqs []protocol.Request
}

func (f *summaryRequests) Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
	last := req.Messages[len(req.Messages)-1]
	for _, b := range last.Blocks {
		if strings.Contains(b.Text, protocol.CompactMarker) {
			f.reqs = append(f.reqs, req)
		}
	}
	return f.Model.Stream(ctx, req)
}

// TestCompactionAsksForText checks that the summary request offers the session's tools
// (the cached prefix, and a conversation holding tool calls stays valid) but forbids
// calling them: the answer must be the summary.
func TestCompactionAsksForText(t *testing.T) {
	p := &summaryRequests{Model: scripted.New(scripted.Options{Default: script(t, bigSteps(6, 2400))})}
	sess, err := agent.New(agent.Config{Workspace: t.TempDir(), Tools: []string{"Read", "Write"},
		Compaction: agent.CompactConfig{MaxContext: 6000}}, agent.Deps{Provider: p, Sink: &recorder{}})
	require.NoError(t, err)
	out := sess.Run(t.Context(), "write the files")
	require.Equal(t, agent.EndCompleted, out.End, "%+v", out.Err)
	require.NotEmpty(t, p.reqs, "the session compacted")
	for _, req := range p.reqs {
		assert.Equal(t, protocol.ToolChoiceNone, req.ToolChoice)
		assert.Len(t, req.Tools, 2)
	}
}

// TestDirStoreWithoutFiles checks that a store without a writer reads but writes
// nothing: every artifact goes through the one redacting writer.
func TestDirStoreWithoutFiles(t *testing.T) {
	dir := t.TempDir()
	store := &agent.DirStore{Dir: dir}
	st, err := store.Load()
	require.NoError(t, err)
	assert.Empty(t, st.Turns)
	assert.Error(t, store.Append([]protocol.Turn{protocol.UserText("hi")}))
	assert.Error(t, store.Replace([]protocol.Turn{protocol.UserText("hi")}, "sum"))
	assert.Error(t, store.SaveStats(agent.Stats{}))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written")
}

func TestCompactionClipsTheTaskAtACharacter(t *testing.T) {
	// 4,000 bytes fall inside a three-byte character.
	task := "write the file " + strings.Repeat("€", 2000)
	sess, err := agent.New(agent.Config{Workspace: t.TempDir(), Tools: []string{"Read", "Write"}, MaxTurns: 40,
		Compaction: agent.CompactConfig{MaxContext: 6000}},
		agent.Deps{Provider: scripted.New(scripted.Options{Default: script(t, bigSteps(12, 2400))}), Sink: &recorder{}})
	require.NoError(t, err)
	out := sess.Run(t.Context(), task)
	require.Equal(t, agent.EndCompleted, out.End, "%+v", out.Err)
	note := sess.Conversation()[0].Blocks[0].Text
	require.Contains(t, note, "The task, as first given:\n", "the session compacted and restated the task")
	assert.True(t, utf8.ValidString(note), "the restated task is cut at a character boundary")
	assert.Contains(t, note, "\nwrite the file €€€")
}

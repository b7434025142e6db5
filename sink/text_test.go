package sink_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// render writes msgs through a Text sink and returns the output and the writes.
func render(t *testing.T, opts sink.TextOptions, msgs ...protocol.Message) (string, []string) {
	t.Helper()
	var w flushWriter
	s := sink.NewText(&w, opts)
	for _, m := range msgs {
		require.NoError(t, s.Write(m))
	}
	require.NoError(t, s.Close())
	return w.buf.String(), w.writes
}

func TestText(t *testing.T) {
	tests := map[string]struct {
		opts sink.TextOptions
		msgs []protocol.Message
	}{
		"session":        {msgs: session()},
		"session_prefix": {opts: sink.TextOptions{Prefix: "[fix-vet] "}, msgs: session()},
		"session_color":  {opts: sink.TextOptions{Prefix: "[fix-vet] ", Color: true}, msgs: session()},
		"timeout":        {opts: sink.TextOptions{Prefix: "[flaky] "}, msgs: failedSession()},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, writes := render(t, tt.opts, tt.msgs...)
			path := filepath.Join("testdata", "TestText", name+".golden")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./sink -run TestText -update")
			assert.Equal(t, string(want), got)

			for i, w := range writes {
				assert.True(t, strings.HasSuffix(w, "\n"), "write %d is not whole lines: %q", i, w)
			}
			for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				assert.True(t, strings.HasPrefix(l, strings.TrimSpace(tt.opts.Prefix)), "line without prefix: %q", l)
				assert.True(t, utf8.ValidString(l))
				if !tt.opts.Color {
					assert.NotContains(t, l, "\x1b", "escape in plain output")
				}
			}
		})
	}
}

func TestTextMessages(t *testing.T) {
	cost := 0.5
	tests := map[string]struct {
		give []protocol.Message
		want string
	}{
		"deltas joined into lines": {
			give: []protocol.Message{{Kind: protocol.KindText, Text: "Hel"}, {Kind: protocol.KindText, Text: "lo\nwor"}, {Kind: protocol.KindText, Text: "ld\n"}},
			want: "Hello\nworld\n",
		},
		"partial line flushed by another kind": {
			give: []protocol.Message{{Kind: protocol.KindText, Text: "Let me look"}, {Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Glob", Input: `{"pattern":"**/*.go"}`}}},
			want: "Let me look\n⏺ Glob(**/*.go)\n",
		},
		"thinking then text": {
			give: []protocol.Message{{Kind: protocol.KindThinking, Text: "hmm\n\nok"}, {Kind: protocol.KindText, Text: "Done"}},
			want: "✻ hmm\n✻\n✻ ok\nDone\n",
		},
		"redacted thinking": {
			give: []protocol.Message{{Kind: protocol.KindThinking, Redacted: "opaque"}},
			want: "✻ [redacted thinking]\n",
		},
		"controls and escapes removed": {
			give: []protocol.Message{{Kind: protocol.KindText, Text: "a\r\n\x1b[1mb\x1b[0m\x00\xff\n"}},
			want: "a\nb\uFFFD\n",
		},
		"CRLF split across deltas": {
			give: []protocol.Message{{Kind: protocol.KindText, Text: "a\r"}, {Kind: protocol.KindText, Text: "\nb"}},
			want: "a\nb\n",
		},
		"multibyte split across deltas": {
			give: []protocol.Message{{Kind: protocol.KindText, Text: "caf\xc3"}, {Kind: protocol.KindText, Text: "\xa9\n"}},
			want: "café\n",
		},
		"call without input": {
			give: []protocol.Message{{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "PlanClear", Input: `{}`}}},
			want: "⏺ PlanClear()\n",
		},
		"call with invalid input": {
			give: []protocol.Message{{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", Input: "{\"command\":\"ls\n"}}},
			want: "⏺ Bash({\"command\":\"ls)\n",
		},
		"call with other argument": {
			give: []protocol.Message{{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Custom", Input: `{"n":5,"x":"y"}`}}},
			want: "⏺ Custom(5)\n",
		},
		"result lines": {
			give: []protocol.Message{{Kind: protocol.KindToolResult, Result: protocol.ToolResult{Content: "\n1\n2\n3\n4\n5\n"}}},
			want: "  ⎿  1\n     2\n     3\n     … +2 lines\n",
		},
		"long result line": {
			give: []protocol.Message{{Kind: protocol.KindToolResult, Result: protocol.ToolResult{Content: strings.Repeat("é", 250) + "\nnext"}}},
			want: "  ⎿  " + strings.Repeat("é", 199) + "…\n     … +1 line\n",
		},
		"error result": {
			give: []protocol.Message{{Kind: protocol.KindToolResult, Result: protocol.ToolResult{Content: "file not found: a.go", IsError: true}}},
			want: "  ⎿  ✗ file not found: a.go\n",
		},
		"ordinary stops are quiet": {
			give: []protocol.Message{{Kind: protocol.KindStop, Stop: "end_turn"}, {Kind: protocol.KindStop, Stop: "tool_use"}, {Kind: protocol.KindStop, Stop: "refusal"}},
			want: "■ stop: refusal\n",
		},
		"error without kind": {
			give: []protocol.Message{{Kind: protocol.KindError, Err: protocol.Error{Message: "boom"}}},
			want: "✗ error: boom\n",
		},
		"retry": {
			give: []protocol.Message{{Kind: protocol.KindRetry, Attempt: 2, DelayMS: 1500, Reason: "http_429 rate limited"}},
			want: "↻ retry 2 in 1.5s: http_429 rate limited\n",
		},
		"usage with cache": {
			give: []protocol.Message{{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 1234567, Output: 5, CacheRead: 1000, CacheCreation: 20}}},
			want: "· tokens 1,234,567 in / 5 out · cache 1,000 read / 20 new\n",
		},
		"result with cost and one turn": {
			give: []protocol.Message{{Kind: protocol.KindResult, Final: &protocol.Result{Status: protocol.StatusSuccess, NumTurns: 1, DurationMS: 65_400, TotalCostUSD: &cost}}},
			want: "✓ success · 1 turn · 1m5s · 0 in / 0 out · $0.5000\n",
		},
		"mcp tool call": {
			give: []protocol.Message{{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "mcp__gh__search", Input: `{"query":"bug"}`, Server: "gh"}}},
			want: "⏺ mcp__gh__search(bug)\n",
		},
		"mcp connected": {
			give: []protocol.Message{{Kind: protocol.KindMCPStatus, MCP: &protocol.MCPServer{Name: "gh", Status: protocol.MCPConnected, ToolCount: 12}}},
			want: "◇ mcp gh: connected (12 tools)\n",
		},
		"mcp timeout": {
			give: []protocol.Message{{Kind: protocol.KindMCPStatus, MCP: &protocol.MCPServer{Name: "db", Status: protocol.MCPTimeout, Reason: "no answer to initialize within 30s", Required: true}}},
			want: "◇ mcp db: timeout: no answer to initialize within 30s\n",
		},
		"mcp restarted": {
			give: []protocol.Message{{Kind: protocol.KindMCPStatus, MCP: &protocol.MCPServer{Name: "db", Status: protocol.MCPRestarted, ToolCount: 1, Restarts: 1, Reason: "it had exited (exit status 2)"}}},
			want: "◇ mcp db: restarted (1 tool): it had exited (exit status 2)\n",
		},
		"nil payloads": {
			give: []protocol.Message{{Kind: protocol.KindSessionStart}, {Kind: protocol.KindSubAgentEnd}, {Kind: protocol.KindResult}, {Kind: protocol.KindMCPStatus}},
			want: "● session\n■ sub-agent  ended:\n✗ finished · 0 turns · 0ms · 0 in / 0 out\n◇ mcp :\n",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, _ := render(t, sink.TextOptions{}, tt.give...)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTextLongLineIsWrittenInPieces(t *testing.T) {
	long := strings.Repeat("ab", 20<<10)
	got, writes := render(t, sink.TextOptions{}, protocol.Message{Kind: protocol.KindText, Text: long})
	assert.Equal(t, long, strings.ReplaceAll(got, "\n", ""))
	assert.Greater(t, strings.Count(got, "\n"), 1)
	assert.Len(t, writes, 2, "one piece on Write, the rest on Close")
}

func TestTextClosed(t *testing.T) {
	var buf bytes.Buffer
	s := sink.NewText(&buf, sink.TextOptions{})
	require.NoError(t, s.Write(protocol.Message{Kind: protocol.KindText, Text: "pending"}))
	assert.Empty(t, buf.String(), "an unfinished line waits")
	require.NoError(t, s.Close())
	assert.Equal(t, "pending\n", buf.String())
	assert.NoError(t, s.Close())
	assert.ErrorIs(t, s.Write(protocol.Message{Kind: protocol.KindText, Text: "x"}), sink.ErrClosed)
}

func TestTextWriteError(t *testing.T) {
	w := flushWriter{err: errDisk}
	s := sink.NewText(&w, sink.TextOptions{})
	assert.ErrorIs(t, s.Write(protocol.Message{Kind: protocol.KindText, Text: "line\n"}), errDisk)
	require.NoError(t, s.Write(protocol.Message{Kind: protocol.KindText, Text: "partial"}))
	assert.ErrorIs(t, s.Close(), errDisk, "the partial line fails on Close")
}

// TestTextSharedWriter has several Text sinks share one writer: lines never mix.
func TestTextSharedWriter(t *testing.T) {
	var out bytes.Buffer
	shared := sink.NewSyncWriter(&out)
	var wg sync.WaitGroup
	const sessions = 6
	for i := range sessions {
		prefix := "[s" + string(rune('0'+i)) + "] "
		s := sink.NewText(shared, sink.TextOptions{Prefix: prefix})
		wg.Go(func() {
			for range 100 {
				for _, d := range []string{"one ", "two ", "three\nfour ", "five\n"} {
					assert.NoError(t, s.Write(protocol.Message{Kind: protocol.KindText, Text: d}))
				}
			}
			assert.NoError(t, s.Close())
		})
	}
	wg.Wait()
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		body := l[len("[s0] "):]
		assert.Contains(t, []string{"one two three", "four five"}, body, "line %q", l)
	}
}

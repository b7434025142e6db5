package sink_test

import (
	"bytes"
	"encoding/json"
	"github.com/agentrun/agentrun/fuzzguard"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

const secret = "sk-ant-api03-Zx9q"

// redactAll writes msgs through a Redactor over secrets, closes it and returns what the
// next sink received.
func redactAll(t *testing.T, secrets []string, msgs ...protocol.Message) []protocol.Message {
	t.Helper()
	var got []protocol.Message
	r := sink.NewRedactor(recorder(&got), secrets)
	writeAll(t, r, msgs...)
	require.NoError(t, r.Close())
	return got
}

func text(s string) protocol.Message  { return protocol.Message{Kind: protocol.KindText, Text: s} }
func think(s string) protocol.Message { return protocol.Message{Kind: protocol.KindThinking, Text: s} }

func TestRedactorDeltas(t *testing.T) {
	stop := protocol.Message{Kind: protocol.KindStop, Stop: "end_turn"}
	tests := map[string]struct {
		give []protocol.Message
		want []protocol.Message
	}{
		"whole secret": {
			give: []protocol.Message{text("key " + secret + " end")},
			want: []protocol.Message{text("key *** end")},
		},
		"split across two deltas": {
			give: []protocol.Message{text("my key is sk-ant-"), text("api03-Zx9q, done")},
			want: []protocol.Message{text("my key is "), text("***, done")},
		},
		"split across three deltas": {
			give: []protocol.Message{text("a sk-a"), text("nt-api03-"), text("Zx9q!")},
			want: []protocol.Message{text("a "), text("***!")},
		},
		"split at every byte": {
			give: func() []protocol.Message {
				var ms []protocol.Message
				for _, c := range "<" + secret + ">" {
					ms = append(ms, text(string(c)))
				}
				return ms
			}(),
			want: []protocol.Message{text("<"), text("***"), text(">")},
		},
		"thinking split": {
			give: []protocol.Message{think("I see sk-ant-api"), think("03-Zx9q in the env")},
			want: []protocol.Message{think("I see "), think("*** in the env")},
		},
		"prefix that is not the secret": {
			give: []protocol.Message{text("sk-ant-"), text("other")},
			want: []protocol.Message{text("sk-ant-other")},
		},
		"held tail released before another kind": {
			give: []protocol.Message{text("see sk-ant"), stop},
			want: []protocol.Message{text("see "), text("sk-ant"), stop},
		},
		"held thinking released before text": {
			give: []protocol.Message{think("hmm sk-"), text("sk-ant-api03-Zx9q")},
			want: []protocol.Message{think("hmm "), think("sk-"), text("***")},
		},
		"held tail released on Close": {
			give: []protocol.Message{text("end sk-an")},
			want: []protocol.Message{text("end "), text("sk-an")},
		},
		"thinking block end joins the held tail": {
			give: []protocol.Message{think("x sk-ant-api03"), {Kind: protocol.KindThinking, Text: "-Zx9q", Signature: "sig"}},
			want: []protocol.Message{think("x "), {Kind: protocol.KindThinking, Text: "***", Signature: "sig"}},
		},
		"streams of different parents are separate": {
			give: []protocol.Message{text("sk-ant-"), {Kind: protocol.KindText, Parent: "toolu_1", Text: "api03-Zx9q"}},
			want: []protocol.Message{text("sk-ant-"), {Kind: protocol.KindText, Parent: "toolu_1", Text: "api03-Zx9q"}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := redactAll(t, []string{secret}, tt.give...)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestRedactorRandomSplits checks the contract: however a text is split into deltas,
// the deltas passed on join to the redaction of the whole text.
func TestRedactorRandomSplits(t *testing.T) {
	secrets := []string{secret, "hunter2", "hunter2hunter2x", "ab"}
	whole := "start " + secret + " hunter2hunter2 hunter2hunter2x abab sk-ant-api03-Zx9 " + secret + secret + " aab end"
	want := redactAll(t, secrets, text(whole))
	require.Len(t, want, 1)
	assert.Equal(t, "start *** ****** *** ****** sk-ant-api03-Zx9 ****** a*** end", want[0].Text)

	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var deltas []protocol.Message
		for rest := whole; rest != ""; {
			n := min(len(rest), 1+rng.IntN(12))
			deltas = append(deltas, text(rest[:n]))
			rest = rest[n:]
		}
		var joined strings.Builder
		for _, m := range redactAll(t, secrets, deltas...) {
			require.Equal(t, protocol.KindText, m.Kind)
			require.NotEmpty(t, m.Text, "no empty deltas")
			joined.WriteString(m.Text)
		}
		require.Equal(t, want[0].Text, joined.String())
	}
}

func TestRedactorFields(t *testing.T) {
	cost := 1.0
	s := secret
	msgs := []protocol.Message{
		{Kind: protocol.KindThinking, Text: s, Signature: s, Redacted: s, Parent: s},
		{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: s, ID: s, Input: `{"command":"curl -H 'x-api-key: ` + s + `' https://api"}`}},
		{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: s, Name: s, Content: "ANTHROPIC_API_KEY=" + s + "\n"}},
		{Kind: protocol.KindUsage, UsageKind: s, SubSession: s},
		{Kind: protocol.KindStop, Stop: protocol.StopReason(s)},
		{Kind: protocol.KindContextUpdate, Context: protocol.ContextUpdate{Kind: s, Trigger: s}},
		{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrorKind(s), Message: "401: invalid x-api-key " + s}},
		{Kind: protocol.KindRetry, Reason: s},
		{Kind: protocol.KindSubAgentStart, Sub: &protocol.SubAgent{SessionID: s, Description: s, Prompt: s, Timestamp: s}},
		{Kind: protocol.KindSubAgentResult, Sub: &protocol.SubAgent{SessionID: s, Status: s, Thinking: s, Text: s}},
		{Kind: protocol.KindSubAgentEnd, Sub: &protocol.SubAgent{SessionID: s, Status: s}},
		{Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{SessionID: s, JobID: s, Provenance: protocol.Provenance{Provider: s, Model: s}, Cwd: s, Tools: []string{s}, TS: s,
			MCPServers: []protocol.MCPServer{{Name: s, Transport: s, Status: s, Reason: s}}}},
		// Ids, key, status and digest come from agentrun itself and are kept as they are.
		{Kind: protocol.KindResult, Final: &protocol.Result{SessionID: "sess", JobID: "job", Status: protocol.StatusSuccess, StopReason: protocol.StopReason(s),
			Result: "the key is " + s, StructuredOutput: json.RawMessage(`{"key":"` + s + `","n":[1]}`), TotalCostUSD: &cost,
			Checks: []protocol.Check{{Name: s, Output: s}}, Error: &protocol.Error{Kind: protocol.ErrorKind(s), Message: s}, SpecDigest: "digest", Key: "key",
			MCPServers: []protocol.MCPServer{{Name: s, Reason: "401 for token " + s}}}},
		{Kind: protocol.KindMCPStatus, MCP: &protocol.MCPServer{Name: s, Transport: s, Status: s, Reason: "Bearer " + s}},
		{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "mcp__x__y", ID: "t", Input: `{}`, Server: s}},
		{Kind: protocol.KindToolResult, Result: protocol.ToolResult{ToolUseID: "t", Name: "mcp__x__y", Content: "ok", Server: s}},
	}
	got := redactAll(t, []string{secret}, msgs...)
	require.Len(t, got, len(msgs))
	for i, m := range got {
		line, err := protocol.AppendEvent(nil, m, protocol.Envelope{})
		require.NoError(t, err)
		assert.NotContains(t, string(line), "Zx9q", "message %d: %s", i, line)
		frame, err := protocol.AppendRESP(nil, m)
		require.NoError(t, err)
		assert.NotContains(t, string(frame), "Zx9q", "message %d frame", i)
		assert.Contains(t, string(line), sink.Mask, "message %d", i)
	}
	assert.Equal(t, `{"command":"curl -H 'x-api-key: ***' https://api"}`, got[1].Call.Input)
	assert.Equal(t, "ANTHROPIC_API_KEY=***\n", got[2].Result.Content)
	assert.Equal(t, "the key is ***", got[12].Final.Result)
	assert.JSONEq(t, `{"key":"***","n":[1]}`, string(got[12].Final.StructuredOutput))
	assert.Equal(t, cost, *got[12].Final.TotalCostUSD)

	// The caller's messages are not changed.
	assert.Equal(t, s, msgs[8].Sub.SessionID)
	assert.Equal(t, s, msgs[11].Session.Tools[0])
	assert.Equal(t, s, msgs[12].Final.Checks[0].Name)
	assert.Equal(t, s, msgs[12].Final.Error.Message)
	assert.Equal(t, s, msgs[11].Session.MCPServers[0].Name)
	assert.Equal(t, s, msgs[13].MCP.Name)
}

func TestRedactorToolInput(t *testing.T) {
	tests := map[string]struct {
		secret string
		give   string
		want   string
	}{
		"raw in a value": {secret: "s3cr3t-token", give: `{"command":"echo s3cr3t-token"}`, want: `{"command":"echo ***"}`},
		"in a key":       {secret: "s3cr3t-token", give: `{"s3cr3t-token":1}`, want: `{"***":1}`},
		"escaped quote":  {secret: `pa"ss\word`, give: `{"p":"x pa\"ss\\word y"}`, want: `{"p":"x *** y"}`},
		"unicode escape": {secret: "s3cr3t-token", give: `{"p":"\u0073\u0033cr3t-token"}`, want: `{"p":"***"}`},
		"escaped slash":  {secret: "a/b/c-key", give: `{"p":"a\/b\/c-key"}`, want: `{"p":"***"}`},
		"html escaped":   {secret: "<tok&en>", give: `{"p":"\u003ctok\u0026en\u003e"}`, want: `{"p":"***"}`},
		"number":         {secret: "424242", give: `{"pin":424242,"n":1}`, want: `{"pin":"***","n":1}`},
		"nested":         {secret: "s3cr3t-token", give: `{"env":{"K":["s3cr3t-token"]}}`, want: `{"env":{"K":["***"]}}`},
		"kept as written": {secret: "s3cr3t-token", give: "{ \"a\" : \"s3cr3t-token\",\n \"b\":  2 }",
			want: "{ \"a\" : \"***\",\n \"b\":  2 }"},
		"no secret unchanged":  {secret: "s3cr3t-token", give: `{ "a":"\u0041" }`, want: `{ "a":"\u0041" }`},
		"invalid JSON":         {secret: "s3cr3t-token", give: `{"command":"echo s3cr3t-token`, want: `{"command":"echo ***`},
		"invalid JSON escaped": {secret: `pa"ss`, give: `{"p":"pa\"ss`, want: `{"p":"***`},
		"across the structure": {secret: `a","b`, give: `{"x":"a","b":1}`, want: `{"x":"***":1}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", ID: "t", Input: tt.give}}
			got := redactAll(t, []string{tt.secret}, m)
			require.Len(t, got, 1)
			assert.Equal(t, tt.want, got[0].Call.Input)
			if json.Valid([]byte(tt.give)) && name != "across the structure" {
				assert.True(t, json.Valid([]byte(got[0].Call.Input)), "no longer valid JSON")
			}
			line, err := protocol.AppendEvent(nil, got[0], protocol.Envelope{})
			require.NoError(t, err)
			assert.True(t, json.Valid(line))
		})
	}
}

func TestRedactorRule(t *testing.T) {
	tests := map[string]struct {
		secrets []string
		give    string
		want    string
	}{
		"short secrets are redacted too": {secrets: []string{"ab"}, give: "cab abc", want: "c*** ***c"},
		"one byte":                       {secrets: []string{"x"}, give: "xyx", want: "***y***"},
		"empty secrets are ignored":      {secrets: []string{"", "tok3n"}, give: "a tok3n", want: "a ***"},
		"no secrets":                     {secrets: nil, give: "tok3n", want: "tok3n"},
		"longest first":                  {secrets: []string{"abc", "abcdef"}, give: "abcdef abcde", want: "*** ***de"},
		"leftmost first":                 {secrets: []string{"bcd", "abc"}, give: "abcd", want: "***d"},
		"mask is not redacted again":     {secrets: []string{"*"}, give: "a*b", want: "a***b"},
		"escaped form in plain text":     {secrets: []string{"line1\nline2"}, give: `cfg: {"k":"line1\nline2"}`, want: `cfg: {"k":"***"}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := redactAll(t, tt.secrets, protocol.Message{Kind: protocol.KindToolResult, Result: protocol.ToolResult{Content: tt.give}})
			require.Len(t, got, 1)
			assert.Equal(t, tt.want, got[0].Result.Content)
		})
	}
}

func TestRedactorErrors(t *testing.T) {
	failing := fakeSink{
		write: func(protocol.Message) error { return errDisk },
		close: func() error { return errDisk },
	}
	r := sink.NewRedactor(failing, []string{secret})
	assert.ErrorIs(t, r.Write(text("hi")), errDisk)
	assert.ErrorIs(t, r.Write(text("held sk-")), errDisk, "the part before the held tail")
	err := r.Close()
	assert.ErrorIs(t, err, errDisk, "releasing the held tail and closing")
}

func TestRedactorInFrontOfRealSinks(t *testing.T) {
	var js, txt bytes.Buffer
	r := sink.NewRedactor(sink.Multi(sink.NewStreamJSON(&js, protocol.Envelope{}), sink.NewText(&txt, sink.TextOptions{})), []string{secret})
	writeAll(t, r, text("export KEY=sk-ant-"), text("api03-Zx9q\n"),
		protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", Input: `{"command":"echo ` + secret + `"}`}})
	require.NoError(t, r.Close())
	assert.NotContains(t, js.String(), "Zx9q")
	assert.Equal(t, "export KEY=***\n⏺ Bash(echo ***)\n", txt.String())
}

// FuzzRedactor checks the redactor's promises on any text and secret: no secret
// survives in a text or a tool input; however the text is split into deltas, the
// deltas join to the redaction of the whole; and a valid JSON input stays valid JSON
// when the secret cannot span its structure. Secrets with '*' are left out: masking
// next to a '*' can spell them again.
func FuzzRedactor(f *testing.F) {
	f.Add("key sk-ant-api03-Zx9q end", "sk-ant-api03-Zx9q", uint64(1))
	f.Add(`{"p":"\u0073\u0033cr3t","n":[424242]}`, "s3cr3t", uint64(2))
	f.Add(`{"p":"pa\"ss\\word"}`, `pa"ss\word`, uint64(3))
	f.Add("abababab", "aba", uint64(4))
	f.Add(`{"x":"a","b":1}`, `a","b`, uint64(5))
	f.Fuzz(func(t *testing.T, s, secret string, seed uint64) {
		fuzzguard.Run(len(s)+len(secret), func() {
			if secret == "" || strings.Contains(secret, "*") || len(s) > 4096 {
				return
			}
			var got []protocol.Message
			r := sink.NewRedactor(recorder(&got), []string{secret})
			require.NoError(t, r.Write(protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Input: s}}))
			require.NoError(t, r.Write(text(s)))
			require.NoError(t, r.Close())
			require.NotEmpty(t, got)
			input := got[0].Call.Input
			var b strings.Builder
			for _, m := range got[1:] { // the text, and a held tail released on Close
				b.WriteString(m.Text)
			}
			whole := b.String()
			require.NotContains(t, input, secret)
			require.NotContains(t, whole, secret)
			if json.Valid([]byte(s)) && !strings.ContainsAny(secret, "{}[]:,\" \t\r\n") {
				require.True(t, json.Valid([]byte(input)), "input %q became %q", s, input)
			}

			rng := rand.New(rand.NewPCG(seed, seed>>1))
			got = got[:0]
			r = sink.NewRedactor(recorder(&got), []string{secret})
			for rest := s; rest != ""; {
				n := min(len(rest), 1+rng.IntN(8))
				require.NoError(t, r.Write(text(rest[:n])))
				rest = rest[n:]
			}
			require.NoError(t, r.Close())
			var joined strings.Builder
			for _, m := range got {
				joined.WriteString(m.Text)
			}
			require.Equal(t, whole, joined.String())
		})
	})
}

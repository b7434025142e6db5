package scripted_test

import (
	"cmp"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/openai"
	"github.com/agentrun/agentrun/transport/responses"
	"github.com/agentrun/agentrun/transport/scripted"
)

// dialect is one real transport pointed at the scripted handler.
type dialect struct {
	name string
	new  func(baseURL string) transport.Dialect
	// signatures says whether the format carries thinking signatures; Chat and
	// Responses do not, so their decoders never yield the signature message.
	signatures bool
}

var dialects = []dialect{
	{name: "anthropic", signatures: true, new: func(u string) transport.Dialect { return anthropic.New(anthropic.Config{BaseURL: u}) }},
	{name: "openai", new: func(u string) transport.Dialect { return openai.New(openai.Config{BaseURL: u}) }},
	{name: "responses", new: func(u string) transport.Dialect { return responses.New(responses.Config{BaseURL: u}) }},
}

// clients returns one transport client per dialect, all against the handler of m.
func clients(t *testing.T, m *scripted.Model, opts transport.Options) map[string]*transport.Client {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	out := map[string]*transport.Client{}
	for _, d := range dialects {
		c := transport.NewClient(d.new(srv.URL+"/v1"), opts)
		out[d.name] = c
		t.Cleanup(c.CloseIdleConnections)
	}
	t.Cleanup(srv.Close)
	return out
}

// comparable drops what format d cannot carry.
func comparable(d dialect, msgs []protocol.Message) []protocol.Message {
	if d.signatures {
		return msgs
	}
	var out []protocol.Message
	for _, m := range msgs {
		if m.Kind == protocol.KindThinking && m.Signature != "" && m.Text == "" {
			continue
		}
		out = append(out, m)
	}
	return out
}

// bigText is about n bytes of mixed scripts, emoji, combining marks and JSON-hostile
// characters.
func bigText(n int) string {
	const unit = "Grüße, 世界! 😀🇫🇷 e\u0301 \"quoted\" back\\slash <tag> & \t tab\r\n line \u2028 sep ∑ ok.\n"
	return strings.Repeat(unit, n/len(unit)+1)
}

var tools = []protocol.ToolSpec{
	{Name: "Glob", Description: "Find files.", InputSchema: []byte(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)},
	{Name: "Read", Description: "Read a file.", InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "Write", Description: "Write a file.", InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`)},
	{Name: "Bash", Description: "Run a command.", InputSchema: []byte(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
}

func TestEquivalence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script *scripted.Script // nil: the demo policy
		chunk  int
		prompt string
		turns  int // requests made, each answering the previous response
	}{
		{name: "text only", script: mustParse(t, "steps:\n  - text: Hello from the scripted model, in a few deltas.\n"), prompt: "hi", turns: 1},
		{name: "thinking, text and two tool calls", script: mustParse(t, `steps:
  - thinking: "The user wants a menu. I'll write it, then check it."
    text: "Saving the menu to menu/café.md now."
    tool_calls:
      - name: Write
        input: {path: "menu/café.md", content: "# Menu\nCrème brûlée — 6 €\n<b>&amp;</b>\n"}
      - name: Bash
        input: {command: "cat menu/café.md && ls -la menu", timeout: 30, background: false}
  - thinking: "Both calls worked."
    text: "Done: the menu is saved."
    usage: {input: 900, output: 12, cache_read: 300}
`), prompt: "Save the café menu", turns: 2},
		{name: "max tokens and refusal", script: mustParse(t, "steps:\n  - {text: cut sh, stop: max_tokens}\n  - {text: I can't help with that., stop: refusal}\n"),
			prompt: "go", turns: 2},
		{name: "unicode and 512 KB", script: &scripted.Script{Steps: []scripted.Step{{Text: bigText(512 << 10), Stop: "end_turn"},
			{Text: "Wie geht's? 😀", Stop: "end_turn"}}}, chunk: 4096, prompt: "Write a long text: ü 日本 🚀", turns: 2},
		// One SSE line of 2 MB (the Responses stream repeats it five times).
		{name: "2 MB in one delta", script: &scripted.Script{Steps: []scripted.Step{{Text: bigText(2 << 20), Stop: "end_turn"}}},
			chunk: 8 << 20, prompt: "one line", turns: 1},
		{name: "demo policy", prompt: "Add a greeting to main.go", turns: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := scripted.New(scripted.Options{Default: tt.script, ChunkRunes: tt.chunk})
			cs := clients(t, m, transport.Options{MaxAttempts: 1})
			req := protocol.Request{Model: "scripted", System: "You are a coding agent.", Tools: tools, MaxTokens: 4096,
				Messages: []protocol.Turn{user(tt.prompt)}}
			var lastWant []protocol.Message
			for turn := range tt.turns {
				want := collect(m.Stream(t.Context(), req))
				lastWant = want
				require.Equal(t, protocol.KindStop, last(want).Kind, "in-process: %v", last(want))
				for _, d := range dialects {
					got := collect(cs[d.name].Stream(t.Context(), req))
					if !assert.Equal(t, comparable(d, want), got, "%s, turn %d", d.name, turn) {
						return
					}
				}
				req.Messages = append(req.Messages, assistantTurn(want))
				if len(calls(want)) > 0 {
					req.Messages = append(req.Messages, results(want, demoTool))
				} else {
					req.Messages = append(req.Messages, user("go on"))
				}
			}
			assert.Empty(t, calls(lastWant), "the last response ends the conversation")
		})
	}
}

func TestEquivalenceRateLimit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits out a rate limit (not with -short)")
	}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			src := "steps:\n  - thinking: hmm\n    text: After the rate limit.\n    tool_calls: [{name: Glob, input: {pattern: '*.go'}}]\n" +
				"    fault: {status: 429, retry_after: 1s}\n"
			m := scripted.New(scripted.Options{Default: mustParse(t, src)})
			c := clients(t, m, transport.Options{})[d.name]
			req := protocol.Request{Model: "scripted", Tools: tools, Messages: []protocol.Turn{user("go")}}
			got := collect(c.Stream(t.Context(), req))
			require.NotEmpty(t, got)
			retry := got[0]
			assert.Equal(t, protocol.KindRetry, retry.Kind)
			assert.Equal(t, 1, retry.Attempt)
			assert.Equal(t, int64(1000), retry.DelayMS, "retry-after is honoured")
			assert.True(t, strings.HasPrefix(retry.Reason, "http_429: HTTP 429: "), retry.Reason)

			first := collect(m.Stream(t.Context(), req))
			assert.Equal(t, []protocol.Message{fail(protocol.ErrRateLimit)}, kinds(first), "in-process fails the same way")
			want := collect(m.Stream(t.Context(), req))
			assert.Equal(t, comparable(d, want), got[1:])
		})
	}
}

func TestEquivalenceCut(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			src := "steps:\n  - text: Sixteen runes ok. And then the rest of the answer arrives.\n    fault: {cut: true}\n"
			m := scripted.New(scripted.Options{Default: mustParse(t, src)})
			c := clients(t, m, transport.Options{BaseDelay: 10 * time.Millisecond, Jitter: func() float64 { return 0 }})
			req := protocol.Request{Model: "scripted", Messages: []protocol.Turn{user("go")}}
			got := collect(c[d.name].Stream(t.Context(), req))

			first := collect(m.Stream(t.Context(), req))
			require.Equal(t, protocol.KindError, last(first).Kind)
			assert.Equal(t, protocol.ErrNetwork, last(first).Err.Kind)
			partial := first[:len(first)-1]
			require.NotEmpty(t, partial)
			want := collect(m.Stream(t.Context(), req))

			require.Len(t, got, len(partial)+1+len(want))
			assert.Equal(t, partial, got[:len(partial)], "the partial output is the same")
			retry := got[len(partial)]
			assert.Equal(t, protocol.KindRetry, retry.Kind)
			assert.Equal(t, int64(10), retry.DelayMS)
			assert.True(t, strings.HasPrefix(retry.Reason, "network: "), retry.Reason)
			assert.Equal(t, want, got[len(partial)+1:], "then the full response")
		})
	}
}

// TestEquivalenceErrorEvent checks that a mid-stream error event fails in process with
// the kind the transport gives it over HTTP, in every format.
func TestEquivalenceErrorEvent(t *testing.T) {
	for _, typ := range []string{"overloaded_error", "model_not_found", "invalid_prompt", "teapot_error"} {
		for _, d := range dialects {
			t.Run(typ+"/"+d.name, func(t *testing.T) {
				t.Parallel()
				m := scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: hi\n    fault: {error_event: "+typ+"}\n")})
				c := clients(t, m, transport.Options{MaxAttempts: 1})[d.name]
				req := protocol.Request{Model: "scripted", Messages: []protocol.Turn{user("go")}}
				got := collect(c.Stream(t.Context(), req))

				want := collect(scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: hi\n    fault: {error_event: "+typ+"}\n")}).
					Stream(t.Context(), req))
				require.Equal(t, protocol.KindError, last(want).Kind)
				require.Equal(t, protocol.KindError, last(got).Kind)
				assert.Equal(t, last(got).Err.Kind, last(want).Err.Kind)
			})
		}
	}
}

// TestEquivalenceSubAgent checks that a sub-agent's request, which names its parent
// Task call, gets the same answer and tool-call ids over HTTP (the transport sends the
// parent in a header) as in process.
func TestEquivalenceSubAgent(t *testing.T) {
	m := scripted.New(scripted.Options{Default: mustParse(t, subAgentScript)})
	cs := clients(t, m, transport.Options{MaxAttempts: 1})
	for _, parent := range []string{"", "tc_0_0", "tc_0_0.0_1", "tc_0_0.1_0"} {
		req := protocol.Request{Model: "scripted", Tools: tools, Messages: []protocol.Turn{user("go")}, Parent: parent}
		want := collect(m.Stream(t.Context(), req))
		require.Equal(t, protocol.KindStop, last(want).Kind)
		for _, d := range dialects {
			assert.Equal(t, comparable(d, want), collect(cs[d.name].Stream(t.Context(), req)), "%s, parent %q", d.name, parent)
		}
	}
}

// attempts reduces a retried stream to what every transport of the same fault must
// agree on: the messages, with each retry's and error's message cut to its kind. The
// usage that an Anthropic stream reported before its final failure is left out: the
// other formats, and the in-process model, report none.
func attempts(msgs []protocol.Message) []protocol.Message {
	out := make([]protocol.Message, 0, len(msgs))
	for i, m := range msgs {
		switch m.Kind {
		case protocol.KindRetry:
			m.Reason, _, _ = strings.Cut(m.Reason, ":")
		case protocol.KindError:
			m.Err.Message = ""
		case protocol.KindUsage:
			if i+2 == len(msgs) && msgs[i+1].Kind == protocol.KindError {
				continue
			}
		default:
			// the other kinds compare as they are
		}
		out = append(out, m)
	}
	return out
}

// TestEquivalenceRetries checks that every fault is retried, or not, the same way in
// process (transport.NewLocal) as over HTTP in every format: the same retries after the
// same delays, and the same partial output, error or final answer.
func TestEquivalenceRetries(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out retries and a stall (not with -short)")
	}
	t.Parallel()
	tests := []struct {
		name      string
		fault     string
		wantRetry []string           // the kinds of the retries
		wantErr   protocol.ErrorKind // the kind of the final error, "" for a success
		// idle is the transport's idle timeout: 5 s unless set, so that no attempt of a
		// loaded machine counts as a stall; the stall's own, which each of its attempts
		// waits out, is shorter.
		idle time.Duration
	}{
		{name: "429 with retry-after", fault: "{status: 429, retry_after: 0.02}", wantRetry: []string{"http_429"}},
		{name: "429 with retry-after-ms", fault: "{status: 429, retry_after_ms: 30, times: 2}", wantRetry: []string{"http_429", "http_429"}},
		{name: "529", fault: "{status: 529}", wantRetry: []string{"overloaded"}},
		{name: "500 with an overloaded body", fault: `{status: 500, body: '{"type":"error","error":{"type":"overloaded_error","message":"busy"}}'}`,
			wantRetry: []string{"overloaded"}},
		{name: "503 and x-should-retry false", fault: `{status: 503, header: {x-should-retry: "false"}}`, wantErr: "server"},
		{name: "409 and x-should-retry true", fault: `{status: 409, header: {x-should-retry: "true"}}`, wantRetry: []string{"server"}},
		{name: "400 and x-should-retry true", fault: `{status: 400, header: {x-should-retry: "true"}}`, wantRetry: []string{"request"}},
		{name: "400", fault: "{status: 400}", wantErr: "request"},
		{name: "401", fault: "{status: 401}", wantErr: "auth"},
		{name: "retry-after past the cap", fault: "{status: 429, retry_after: 120}", wantErr: "http_429"},
		{name: "every attempt", fault: "{status: 500, times: 9}", wantRetry: []string{"server", "server", "server"}, wantErr: "server"},
		{name: "cut", fault: "{cut: true}", wantRetry: []string{"network"}},
		{name: "eof", fault: "{eof: true}", wantRetry: []string{"stream"}},
		{name: "malformed", fault: "{malformed: true}", wantRetry: []string{"stream"}},
		{name: "stall", fault: "{stall: true}", wantRetry: []string{"inactivity"}, idle: time.Second},
		{name: "overloaded error event", fault: "{error_event: overloaded_error}", wantRetry: []string{"overloaded"}},
		{name: "invalid_request error event", fault: "{error_event: invalid_request_error}", wantErr: "request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := transport.Options{BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond, MaxRetryAfter: time.Minute,
				IdleTimeout: cmp.Or(tt.idle, 5*time.Second), Jitter: func() float64 { return 0 }}
			src := "steps:\n  - thinking: first\n    text: A long enough answer to be cut in the middle.\n" +
				"    tool_calls: [{name: Glob, input: {pattern: '*.go'}}]\n    fault: " + tt.fault + "\n"
			req := protocol.Request{Model: "scripted", Tools: tools, Messages: []protocol.Turn{user("go")}}
			local := scripted.New(scripted.Options{Default: mustParse(t, src)})
			want := attempts(collect(transport.NewLocal(local, opts).Stream(t.Context(), req)))
			var kinds []string
			for _, m := range want {
				if m.Kind == protocol.KindRetry {
					kinds = append(kinds, m.Reason)
				}
			}
			assert.Equal(t, tt.wantRetry, kinds, "the retries in process")
			if tt.wantErr != "" {
				assert.Equal(t, fail(tt.wantErr), last(want), "the error in process")
			} else {
				assert.Equal(t, protocol.KindStop, last(want).Kind, "in process: %v", last(want))
			}
			for _, d := range dialects {
				m := scripted.New(scripted.Options{Default: mustParse(t, src)})
				got := attempts(collect(clients(t, m, opts)[d.name].Stream(t.Context(), req)))
				assert.Equal(t, comparable(d, want), got, "%s", d.name)
			}
		})
	}
}

// TestSessionScripts checks that over HTTP the session a request names picks its
// script (Options.Sessions) before the model's name does, and that a session without
// one of its own gets the model's script, then the default.
func TestSessionScripts(t *testing.T) {
	m := scripted.New(scripted.Options{
		Sessions: map[string]*scripted.Script{
			"job-a+model=m1":    mustParse(t, "steps:\n  - text: script a\n"),
			"job-b+model=m1.r2": mustParse(t, "steps:\n  - text: script b\n"),
		},
		Scripts: map[string]*scripted.Script{"m1": mustParse(t, "steps:\n  - text: script m1\n")},
		Default: mustParse(t, "steps:\n  - text: the default\n"),
	})
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	tests := []struct{ session, model, want string }{
		{session: "job-a+model=m1", model: "m1", want: "script a"},
		{session: "job-b+model=m1.r2", model: "m1", want: "script b"},
		{session: "job-c", model: "m1", want: "script m1"},
		{session: "job-c", model: "m2", want: "the default"},
		{model: "m1", want: "script m1"},
	}
	for _, tt := range tests {
		c := transport.NewClient(anthropic.New(anthropic.Config{BaseURL: srv.URL + "/v1",
			Headers: map[string]string{scripted.SessionHeader: tt.session}}), transport.Options{MaxAttempts: 1})
		got := collect(c.Stream(t.Context(), protocol.Request{Model: tt.model, Messages: []protocol.Turn{user("go")}}))
		c.CloseIdleConnections()
		assert.Equal(t, tt.want, textOf(got), "session %q, model %q", tt.session, tt.model)
	}
	got := collect(m.Stream(t.Context(), protocol.Request{Model: "m1", Messages: []protocol.Turn{user("go")}}))
	assert.Equal(t, "script m1", textOf(got), "in process a request names no session")
}

// TestEquivalenceParentNotAHeader checks that a parent id that cannot be a header
// value (another server's tool-call id may hold anything) is left out of the request
// rather than failing it.
func TestEquivalenceParentNotAHeader(t *testing.T) {
	m := scripted.New(scripted.Options{Default: mustParse(t, subAgentScript)})
	cs := clients(t, m, transport.Options{MaxAttempts: 1})
	req := protocol.Request{Model: "scripted", Messages: []protocol.Turn{user("go")}, Parent: "call\n1"}
	for _, d := range dialects {
		got := collect(cs[d.name].Stream(t.Context(), req))
		assert.Equal(t, "top 0", textOf(got), d.name)
		assert.Equal(t, protocol.KindStop, last(got).Kind, "%s: %v", d.name, last(got))
	}
}

package protocol_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/agentrun/agentrun/fuzzguard"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
)

// checkLine asserts what every event line must be: one line of valid JSON in valid
// UTF-8, with "type" first and no raw line or paragraph separators.
func checkLine(t *testing.T, line []byte) {
	t.Helper()
	require.True(t, json.Valid(line), "not valid JSON: %q", line)
	assert.True(t, utf8.Valid(line), "not valid UTF-8: %q", line)
	assert.False(t, bytes.ContainsAny(line, "\r\n\u2028\u2029"), "line breaks in %q", line)
	assert.Equal(t, "type", firstKey(t, line))
}

func TestAppendEventValidForAnyBytes(t *testing.T) {
	env := protocol.Envelope{Seq: 7, TS: time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC), SessionID: "s\xff1", JobID: "j\u2028"}
	for sname, s := range trickyStrings {
		for mname, m := range messagesWith(s) {
			t.Run(sname+"/"+mname, func(t *testing.T) {
				line, err := protocol.AppendEvent(nil, m, env)
				require.NoError(t, err)
				checkLine(t, line)
			})
		}
	}
}

func TestAppendEventAppends(t *testing.T) {
	line, err := protocol.AppendEvent([]byte("prefix "), protocol.Message{Kind: protocol.KindStop, Stop: "end_turn"}, protocol.Envelope{})
	require.NoError(t, err)
	assert.Equal(t, `prefix {"type":"stop","reason":"end_turn"}`, string(line))
}

func TestAppendEventInvalidKind(t *testing.T) {
	_, err := protocol.AppendEvent(nil, protocol.Message{Kind: 200}, protocol.Envelope{})
	assert.Error(t, err)
}

func TestAppendEventReplacesInvalidUTF8(t *testing.T) {
	line, err := protocol.AppendEvent(nil, protocol.Message{Kind: protocol.KindText, Text: "a\xffb\u2028c\x01"}, protocol.Envelope{})
	require.NoError(t, err)
	assert.Equal(t, `{"type":"text","content":"a\ufffdb\u2028c\u0001"}`, string(line))
}

func TestAppendEventToolInput(t *testing.T) {
	tests := map[string]struct {
		give string
		want string // the JSON of the input member
	}{
		"object":               {give: `{"command":"go test ./..."}`, want: `{"command":"go test ./..."}`},
		"object kept as sent":  {give: `{"b": 1, "a": [1, 2]}`, want: `{"b": 1, "a": [1, 2]}`},
		"multi-line object":    {give: "{\n  \"command\": \"ls\",\n  \"n\": [1,\r\n 2]\n}", want: `{"command":"ls","n":[1,2]}`},
		"truncated object":     {give: `{"command":"ls`, want: `"{\"command\":\"ls"`},
		"array":                {give: `[1,2]`, want: `"[1,2]"`},
		"string":               {give: `"pwd"`, want: `"\"pwd\""`},
		"null":                 {give: `null`, want: `"null"`},
		"empty":                {give: ``, want: `""`},
		"trailing garbage":     {give: `{"a":1} x`, want: `"{\"a\":1} x"`},
		"leading space":        {give: ` {"a":1}`, want: `" {\"a\":1}"`},
		"two objects":          {give: `{"a":1}{"b":2}`, want: `"{\"a\":1}{\"b\":2}"`},
		"raw newline inside":   {give: "{\"a\":\"x\ny\"}", want: `"{\"a\":\"x\ny\"}"`},
		"invalid UTF-8 inside": {give: "{\"a\":\"\xff\"}", want: `"{\"a\":\"\ufffd\"}"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", ID: "t1", Input: tt.give}}
			line, err := protocol.AppendEvent(nil, m, protocol.Envelope{})
			require.NoError(t, err)
			checkLine(t, line)
			var ev struct {
				Input json.RawMessage `json:"input"`
			}
			require.NoError(t, json.Unmarshal(line, &ev))
			assert.Equal(t, tt.want, string(ev.Input))
		})
	}
}

func TestAppendEventShape(t *testing.T) {
	ts := time.Date(2026, 5, 6, 14, 0, 0, 250e6, time.FixedZone("CEST", 2*3600))
	env := protocol.Envelope{Seq: 3, TS: ts, SessionID: "s1", JobID: "fix-vet"}
	tests := map[string]struct {
		give protocol.Message
		want string
	}{
		"text": {
			give: protocol.Message{Kind: protocol.KindText, Text: "Hi"},
			want: `{"type":"text","seq":3,"ts":"2026-05-06T12:00:00.250Z","session_id":"s1","job_id":"fix-vet","content":"Hi"}`,
		},
		"usage without kind is agent": {
			give: protocol.Message{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 25, Output: 42, CacheRead: 8}},
			want: `{"type":"usage","seq":3,"ts":"2026-05-06T12:00:00.250Z","session_id":"s1","job_id":"fix-vet","input_tokens":25,"output_tokens":42,"cache_read_input_tokens":8,"cache_creation_input_tokens":0,"kind":"agent"}`,
		},
		"session start carries its own ids": {
			give: protocol.Message{Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{SessionID: "s9", JobID: "j9", Provenance: protocol.Provenance{Provider: "scripted", Model: "m"}, Cwd: "/w"}},
			want: `{"type":"session_start","seq":3,"schema_version":1,"session_id":"s9","job_id":"j9","provider":"scripted","model":"m","cwd":"/w","tools":[],"ts":"2026-05-06T12:00:00.250Z"}`,
		},
		"result": {
			give: protocol.Message{Kind: protocol.KindResult, Final: &protocol.Result{SessionID: "s9", JobID: "j9", Status: protocol.StatusTimeout, IsError: true,
				Error: &protocol.Error{Kind: "timeout", Message: "session exceeded 30m0s"}, StructuredOutput: json.RawMessage("{\n\"a\": 1}")}},
			want: `{"type":"result","seq":3,"ts":"2026-05-06T12:00:00.250Z","session_id":"s9","job_id":"j9","provider":"","model":"","status":"error_timeout","subtype":"error_during_execution","is_error":true,"stop_reason":"","num_turns":0,"duration_ms":0,"duration_api_ms":0,"usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},"total_cost_usd":null,"result":"","structured_output":{"a":1},"checks":null,"error":{"kind":"timeout","message":"session exceeded 30m0s"},"retries":0,"attempts":0}`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			line, err := protocol.AppendEvent(nil, tt.give, env)
			require.NoError(t, err)
			checkLine(t, line)
			assert.JSONEq(t, tt.want, string(line))
		})
	}
}

func TestAppendEventResultNeverFails(t *testing.T) {
	nan, tiny := 0.0, 1e-9
	nan /= nan
	tests := map[string]struct {
		give *protocol.Result
		want string // the members checked
	}{
		"NaN cost":                  {give: &protocol.Result{TotalCostUSD: &nan}, want: `{"total_cost_usd":null,"structured_output":null}`},
		"tiny cost":                 {give: &protocol.Result{TotalCostUSD: &tiny}, want: `{"total_cost_usd":1e-9,"structured_output":null}`},
		"invalid structured output": {give: &protocol.Result{StructuredOutput: json.RawMessage(`{"a":`)}, want: `{"total_cost_usd":null,"structured_output":"{\"a\":"}`},
		"nil result":                {give: nil, want: `{"total_cost_usd":null,"structured_output":null}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			line, err := protocol.AppendEvent(nil, protocol.Message{Kind: protocol.KindResult, Final: tt.give}, protocol.Envelope{})
			require.NoError(t, err)
			checkLine(t, line)
			var got struct {
				Cost   json.RawMessage `json:"total_cost_usd"`
				Output json.RawMessage `json:"structured_output"`
			}
			require.NoError(t, json.Unmarshal(line, &got))
			assert.JSONEq(t, tt.want, `{"total_cost_usd":`+string(got.Cost)+`,"structured_output":`+string(got.Output)+`}`)
		})
	}
}

// validUTF8 lists the tricky strings that JSON can carry exactly.
func validUTF8() map[string]string {
	out := map[string]string{}
	for name, s := range trickyStrings {
		if utf8.ValidString(s) {
			out[name] = s
		}
	}
	return out
}

func TestEventRoundTrip(t *testing.T) {
	env := protocol.Envelope{Seq: 42, TS: time.Date(2026, 5, 6, 12, 0, 1, 123e6, time.UTC), SessionID: "s1", JobID: "fix-vet"}
	for sname, s := range validUTF8() {
		for mname, m := range messagesWith(s) {
			t.Run(sname+"/"+mname, func(t *testing.T) {
				line, err := protocol.AppendEvent(nil, m, env)
				require.NoError(t, err)
				got, gotEnv, err := protocol.ParseEvent(line)
				require.NoError(t, err)
				equalMessage(t, m, got)
				assert.Equal(t, env.Seq, gotEnv.Seq)
				if m.Kind != protocol.KindSessionStart && m.Kind != protocol.KindResult {
					assert.True(t, env.TS.Equal(gotEnv.TS), "ts %v, want %v", gotEnv.TS, env.TS)
					assert.Equal(t, env.SessionID, gotEnv.SessionID)
					assert.Equal(t, env.JobID, gotEnv.JobID)
				}
			})
		}
	}
}

func TestParseEventNormalizes(t *testing.T) {
	tests := map[string]struct {
		give string
		want protocol.Message
	}{
		"usage without kind": {
			give: `{"type":"usage","input_tokens":1}`,
			want: protocol.Message{Kind: protocol.KindUsage, Usage: protocol.Usage{Input: 1}, UsageKind: "agent"},
		},
		"session start without tools": {
			give: `{"type":"session_start","session_id":"s"}`,
			want: protocol.Message{Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{SessionID: "s", Tools: []string{}}},
		},
		"multi-line input": {
			give: "{\"type\":\"tool_call\",\"name\":\"Bash\",\"input\":{\n\"a\": 1}}",
			want: protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", Input: `{"a":1}`}},
		},
		"null input": {
			give: `{"type":"tool_call","name":"Bash","input":null}`,
			want: protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash"}},
		},
		"string input": {
			give: `{"type":"tool_call","name":"Bash","input":"{\"a\":"}`,
			want: protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: "Bash", Input: `{"a":`}},
		},
		"invalid UTF-8 in input": {
			give: "{\"type\":\"tool_call\",\"input\":{\"a\":\"\xff\"}}",
			want: protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Input: "{\"a\":\"\uFFFD\"}"}},
		},
		"null structured output": {
			give: `{"type":"result","status":"success","structured_output":null}`,
			want: protocol.Message{Kind: protocol.KindResult, Final: &protocol.Result{Status: protocol.StatusSuccess}},
		},
		"unknown fields": {
			give: `{"type":"stop","reason":"end_turn","extra":{"x":[1]}}`,
			want: protocol.Message{Kind: protocol.KindStop, Stop: "end_turn"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, _, err := protocol.ParseEvent([]byte(tt.give))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseEventErrors(t *testing.T) {
	tests := map[string]struct {
		give       string
		wantNotEvt bool
	}{
		"unknown type":   {give: `{"type":"debug","x":1}`, wantNotEvt: true},
		"missing type":   {give: `{"content":"x"}`, wantNotEvt: true},
		"null":           {give: `null`},
		"array":          {give: `[{"type":"text"}]`},
		"empty":          {give: ``},
		"torn":           {give: `{"type":"text","content":"ab`},
		"wrong type":     {give: `{"type":"text","content":5}`},
		"two objects":    {give: `{"type":"stop"}{"type":"stop"}`},
		"bad result":     {give: `{"type":"result","usage":5}`},
		"number attempt": {give: `{"type":"retry","attempt":1.5}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, err := protocol.ParseEvent([]byte(tt.give))
			require.Error(t, err)
			assert.Equal(t, tt.wantNotEvt, errors.Is(err, protocol.ErrNotEvent), "error %v", err)
		})
	}
}

func FuzzParseEvent(f *testing.F) {
	env := protocol.Envelope{Seq: 9, TS: time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC), SessionID: "s", JobID: "j"}
	for _, m := range messagesWith("a\n\"\xff\u2028") {
		line, err := protocol.AppendEvent(nil, m, env)
		require.NoError(f, err)
		f.Add(line)
	}
	f.Add([]byte(`{"type":"tool_call","input":{ "a" : [1, 2] }}`))
	f.Add([]byte(`{"type":"result","structured_output":[ 1 ],"total_cost_usd":-0}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fuzzguard.Run(len(line), func() {
			m, env, err := protocol.ParseEvent(line)
			if err != nil {
				return
			}
			out, err := protocol.AppendEvent(nil, m, env)
			require.NoError(t, err)
			require.True(t, json.Valid(out), "not valid JSON: %q", out)
			require.True(t, utf8.Valid(out), "not valid UTF-8: %q", out)
			require.False(t, bytes.ContainsAny(out, "\r\n"), "line break in %q", out)
			again, env2, err := protocol.ParseEvent(out)
			require.NoError(t, err, "line %q", out)
			require.Equal(t, m, again)
			require.Equal(t, env.Seq, env2.Seq)
			require.Equal(t, env.SessionID, env2.SessionID)
			require.Equal(t, env.JobID, env2.JobID)
		})
	})
}

func TestAppendEventTimestamp(t *testing.T) {
	tests := map[string]time.Time{
		"UTC":             time.Date(2026, 5, 6, 12, 0, 1, 123456789, time.UTC),
		"other zone":      time.Date(2026, 1, 1, 0, 30, 0, 999999999, time.FixedZone("X", -5*3600)),
		"year 1":          time.Date(1, 1, 1, 0, 0, 0, 1e6, time.UTC),
		"year 9999":       time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		"after year 9999": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		"before year 0":   time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for name, ts := range tests {
		t.Run(name, func(t *testing.T) {
			line, err := protocol.AppendEvent(nil, protocol.Message{Kind: protocol.KindStop}, protocol.Envelope{TS: ts})
			require.NoError(t, err)
			checkLine(t, line)
			var got struct {
				TS string `json:"ts"`
			}
			require.NoError(t, json.Unmarshal(line, &got))
			assert.Equal(t, ts.UTC().Format(protocol.TimeFormat), got.TS)
		})
	}
}

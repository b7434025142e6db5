package sink_test

import (
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// session returns the messages of a realistic session: thinking, text split over many
// deltas, tool calls with an error result and a long result, a retry, usage, a
// sub-agent and the final result.
func session() []protocol.Message {
	text := func(s string) protocol.Message { return protocol.Message{Kind: protocol.KindText, Text: s} }
	think := func(s string) protocol.Message { return protocol.Message{Kind: protocol.KindThinking, Text: s} }
	call := func(id, name, input string) protocol.Message {
		return protocol.Message{Kind: protocol.KindToolCall, Call: protocol.ToolCall{Name: name, ID: id, Input: input}}
	}
	result := func(id, name, content string, isErr bool) protocol.Message {
		return protocol.Message{Kind: protocol.KindToolResult,
			Result: protocol.ToolResult{ToolUseID: id, Name: name, Content: content, IsError: isErr}}
	}
	usage := func(in, out, cacheRead int64) protocol.Message {
		return protocol.Message{Kind: protocol.KindUsage, UsageKind: "agent",
			Usage: protocol.Usage{Input: in, Output: out, CacheRead: cacheRead}}
	}
	stop := func(reason protocol.StopReason) protocol.Message {
		return protocol.Message{Kind: protocol.KindStop, Stop: reason}
	}

	var file strings.Builder
	file.WriteString("Read(main.go) [24 lines, 402 bytes]\n")
	file.WriteString("package main\n\nimport \"fmt\"\n\n")
	for i := range 19 {
		file.WriteString("// line " + strings.Repeat("=", i) + "\n")
	}
	cost := 0.0123
	return []protocol.Message{
		{Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{
			SessionID: "20260506-120000-1a2b", JobID: "fix-vet", Provenance: protocol.Provenance{Provider: "anthropic", Model: "claude-sonnet-4-6"},
			Cwd: "/work/repo", Tools: []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "TodoWrite", "Task"},
			TS: "2026-05-06T12:00:00.000Z"}},
		think("The user wants me to run "), think("go vet and fix"), think(" what it reports.\nLet me start"),
		think(" by running it."),
		{Kind: protocol.KindThinking, Signature: "EqQBCkYIBxgCKkA"},
		text("I'll run "), text("`go vet`"), text(" first"), text(" to see what"), text(" it reports.\n\nThen I'll fix"),
		text(" each finding.\n"),
		call("toolu_01", "Bash", `{"command":"go vet ./..."}`),
		result("toolu_01", "Bash", "# example.com/app\n./main.go:12:2: fmt.Printf format %d has arg name of wrong type string\n[exit code 1]", true),
		usage(1234, 567, 890),
		stop("tool_use"),
		{Kind: protocol.KindRetry, Attempt: 1, DelayMS: 1500, Reason: "http_529 overloaded"},
		{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrStream, Message: "stream ended without message_stop\n(after 3 events)"}},
		{Kind: protocol.KindRetry, Attempt: 2, DelayMS: 3000, Reason: "stream"},
		text("Found one problem. "), text("Reading the file."),
		call("toolu_02", "Read", `{"path":"main.go"}`),
		result("toolu_02", "Read", file.String(), false),
		call("toolu_03", "Edit", `{"path":"main.go","old_string":"%d","new_string":"%s"}`),
		result("toolu_03", "Edit", "Success: Edit(main.go) [+1 -1 lines]\n\x1b[31m-\tfmt.Printf(\"%d\", name)\x1b[0m\n\x1b[32m+\tfmt.Printf(\"%s\", name)\x1b[0m", false),
		call("toolu_04", "Grep", `{"pattern":"Printf\\(","path":"."}`),
		result("toolu_04", "Grep", "", false),
		{Kind: protocol.KindContextUpdate, Context: protocol.ContextUpdate{Kind: "compact", Trigger: "auto"}},
		{Kind: protocol.KindUsage, UsageKind: "compact", Usage: protocol.Usage{Input: 20000, Output: 800}},
		call("toolu_05", "Task", `{"description":"check the other packages","prompt":"Look for more vet findings in ./internal."}`),
		{Kind: protocol.KindSubAgentStart, Parent: "toolu_05", Sub: &protocol.SubAgent{SessionID: "sub_01",
			Description: "check the other packages", Prompt: "Look for more vet findings in ./internal.", Timestamp: "2026-05-06T12:00:02Z"}},
		{Kind: protocol.KindText, Parent: "toolu_05", Text: "Scanning ./internal"},
		{Kind: protocol.KindText, Parent: "toolu_05", Text: " …\n"},
		{Kind: protocol.KindToolCall, Parent: "toolu_05", Call: protocol.ToolCall{Name: "Bash", ID: "toolu_s1", Input: `{"command":"go vet ./internal/..."}`}},
		{Kind: protocol.KindToolResult, Parent: "toolu_05", Result: protocol.ToolResult{ToolUseID: "toolu_s1", Name: "Bash", Content: ""}},
		{Kind: protocol.KindUsage, UsageKind: "sub_agent", SubSession: "sub_01", Usage: protocol.Usage{Input: 900, Output: 120}},
		{Kind: protocol.KindSubAgentResult, Parent: "toolu_05", Sub: &protocol.SubAgent{SessionID: "sub_01", Status: "ok",
			Usage: protocol.Usage{Input: 900, Output: 120}, Text: "No other findings.\nAll packages are clean."}},
		{Kind: protocol.KindSubAgentEnd, Parent: "toolu_05", Sub: &protocol.SubAgent{SessionID: "sub_01", Status: "ok", Timestamp: "2026-05-06T12:00:09Z"}},
		result("toolu_05", "Task", "No other findings.\nAll packages are clean.", false),
		call("toolu_06", "TodoWrite", `{"todos":[{"content":"run vet","status":"completed"},{"content":"fix","status":"completed"},{"content":"test","status":"in_progress"}]}`),
		result("toolu_06", "TodoWrite", "- [x] run vet\n- [x] fix\n- [ ] test", false),
		call("toolu_07", "Bash", "{\"command\":\"go vet ./... &&\\n  go test -count=1 -race ./... 2>&1 | tee /tmp/test-output-with-a-long-name.log\"}"),
		result("toolu_07", "Bash", "ok  \texample.com/app\t0.012s\n", false),
		text("Fixed the format verb in `main.go`.\nAll checks pass."),
		usage(2345, 321, 1200),
		stop("end_turn"),
		{Kind: protocol.KindResult, Final: &protocol.Result{SessionID: "20260506-120000-1a2b", JobID: "fix-vet",
			Status: protocol.StatusSuccess, StopReason: "end_turn", NumTurns: 4, DurationMS: 3200, DurationAPIMS: 2100,
			Usage: protocol.Usage{Input: 1234, Output: 567}, TotalCostUSD: &cost, Result: "Fixed the format verb.",
			Checks: []protocol.Check{{Name: "vet", Passed: true, DurationMS: 400}, {Name: "test", Passed: true, DurationMS: 2300}}}},
	}
}

// failedSession returns a session that times out with a failing check.
func failedSession() []protocol.Message {
	return []protocol.Message{
		{Kind: protocol.KindSessionStart, Session: &protocol.SessionStart{SessionID: "s2", JobID: "flaky", Provenance: protocol.Provenance{Provider: "scripted"}}},
		{Kind: protocol.KindText, Text: "Working"},
		{Kind: protocol.KindText, Text: " on it"},
		{Kind: protocol.KindStop, Stop: "max_tokens"},
		{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrTimeout, Message: "session exceeded 30m0s"}},
		{Kind: protocol.KindResult, Final: &protocol.Result{SessionID: "s2", JobID: "flaky", Status: protocol.StatusTimeout,
			IsError: true, NumTurns: 1, DurationMS: 1_800_000, Usage: protocol.Usage{Input: 1_234_567, Output: 89},
			Error: &protocol.Error{Kind: protocol.ErrTimeout, Message: "session exceeded 30m0s"},
			Checks: []protocol.Check{{Name: "test", ExitCode: 1, DurationMS: 9000,
				Output: "=== RUN   TestA\n--- FAIL: TestA (0.00s)\n    a_test.go:9: got 1, want 2\nFAIL\nFAIL\texample.com/app\t0.010s"}}}},
	}
}

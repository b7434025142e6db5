//go:build e2e

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
)

// The end-to-end fault suite: every scenario runs `agentrun run` as a subprocess on 100
// sessions, against one `agentrun fake-server` subprocess for the HTTP faults or the
// in-process scripted model for the rest, and then checks the exit code, every row of
// summary.json, every line of every stream, that no secret reached any file, and that
// the run left no process and no goroutine behind. Specs and scripts live in
// testdata/e2e.

const (
	// e2eSessions is the number of sessions of every scenario.
	e2eSessions = 100
	// e2eParallel is how many scenario runs go at once: each is a process running 100
	// sessions, and the machine has two cores.
	e2eParallel = 2
)

// e2eDir is the folder of the suite's specs and scripts.
var e2eDir = filepath.Join("testdata", "e2e")

// skipShort skips the 100-session runs under -short, and inside TestReadme's nested run
// of the README's test command: the outer run already runs them, and running them twice
// would double the suite's time.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end fault suite: 100-session runs of the agentrun binary take tens of seconds; skipped with -short")
	}
	if os.Getenv(readmeTestEnv) != "" {
		t.Skip("end-to-end fault suite: run by the outer test run, not again inside TestReadme's clone")
	}
}

// newMarker returns a value unique to one run, which the specs put in the environment
// of every tool process (E2E_MARKER) so that the test can find the processes a run left.
func newMarker(t *testing.T, name string) string {
	t.Helper()
	return "e2e-marker-" + name + "-" + randomHex(t)
}

// runEnv is the environment of an `agentrun run` of the suite: debug logging, the
// secrets and the marker.
func runEnv(t *testing.T, sec e2eSecrets, serverURL, marker string) []string {
	t.Helper()
	extra := append(sec.env(serverURL), "E2E_MARKER="+marker, "AGENTRUN_LOG_LEVEL=debug")
	return baseEnv(t, extra...)
}

// e2eScenario is one fault of the suite.
type e2eScenario struct {
	// name names the spec testdata/e2e/NAME.yaml and, for HTTP scenarios, the model
	// and the fake server's script testdata/e2e/scripts/NAME.yaml.
	name string
	http bool
	// wantCode is the run's exit code; status the status of every session by job id.
	wantCode int
	status   map[string]protocol.Status
	// session checks one session further; summary checks summary.json further.
	session func(t *testing.T, s e2eSession)
	summary func(t *testing.T, sum e2eSummary)
}

// every is the status of the single job of a scenario named job.
func every(job string, st protocol.Status) map[string]protocol.Status {
	return map[string]protocol.Status{job: st}
}

// ranTool checks that the session's tool ran once and printed the token, masked, and
// no API key (tools never see them).
func ranTool(t *testing.T, s e2eSession, withKeys bool) {
	t.Helper()
	results := s.of(protocol.KindToolResult)
	require.Len(t, results, 1, s.key)
	assert.Contains(t, results[0].Result.Content, "token=***", "%s: the tool printed the token, masked", s.key)
	if withKeys {
		assert.Contains(t, results[0].Result.Content, "keys=[]", "%s: tools never see the API keys", s.key)
	}
}

// recovered checks a session that succeeded after n retries of the given error kind;
// midStream means each failed attempt had sent part of its response first.
func recovered(n int, kind protocol.ErrorKind, midStream bool) func(t *testing.T, s e2eSession) {
	return func(t *testing.T, s e2eSession) {
		t.Helper()
		retries := s.of(protocol.KindRetry)
		require.Len(t, retries, n, "%s: retry events", s.key)
		for _, r := range retries {
			assert.True(t, strings.HasPrefix(r.Reason, string(kind)+": "), "%s: retry reason %q, want kind %s", s.key, r.Reason, kind)
		}
		if midStream {
			first := slices.IndexFunc(s.events, func(m protocol.Message) bool { return m.Kind == protocol.KindRetry })
			assert.Equal(t, protocol.KindText, s.events[first-1].Kind, "%s: partial output before the retry", s.key)
		}
		ranTool(t, s, true)
		assert.Equal(t, 2, s.result.NumTurns, s.key)
		assert.Equal(t, 1, s.result.Attempts, "%s: the transport retried, not the runner", s.key)
	}
}

// failed checks a session that ended with an error of kind after n retry events (-1:
// any number) and never ran its tool.
func failed(kind protocol.ErrorKind, n int) func(t *testing.T, s e2eSession) {
	return func(t *testing.T, s e2eSession) {
		t.Helper()
		require.NotNil(t, s.result.Error, s.key)
		assert.Equal(t, kind, s.result.Error.Kind, "%s: %s", s.key, s.result.Error.Message)
		if n >= 0 {
			assert.Len(t, s.of(protocol.KindRetry), n, "%s: retry events", s.key)
		}
		assert.Empty(t, s.of(protocol.KindToolResult), s.key)
		assert.True(t, s.result.IsError, s.key)
	}
}

// throttled checks that the run reports time paused by rate limits or overload.
func throttled(t *testing.T, sum e2eSummary) {
	t.Helper()
	assert.Positive(t, sum.Totals.ThrottledMS, "totals.throttled_ms")
	assert.Positive(t, sum.Totals.ThrottlePauses, "totals.throttle_pauses")
}

// The transport makes four attempts of a request, so a fault on every attempt shows
// three retry events.
const retriesBeforeGivingUp = 3

// stalledOut checks a session whose every attempt stalled after its first words: the
// transport's idle timer (half the session's) ended each attempt, the watchdog waited
// out each announced backoff, and the transport gave up after its last attempt. The
// watchdog never fires first, however long the agent takes to write what it received.
func stalledOut(t *testing.T, s e2eSession) {
	failed(protocol.ErrInactivity, retriesBeforeGivingUp)(t, s)
	assert.NotEmpty(t, s.of(protocol.KindText), "%s: each attempt stalled after its first words", s.key)
	for _, r := range s.of(protocol.KindRetry) {
		assert.True(t, strings.HasPrefix(r.Reason, string(protocol.ErrInactivity)+": "), "%s: retry reason %q", s.key, r.Reason)
	}
	assert.Contains(t, s.result.Error.Message, "no bytes received within the idle timeout",
		"%s: the transport, not the watchdog, ended the session", s.key)
}

var e2eScenarios = []e2eScenario{
	{
		name: "rate-limit", http: true, wantCode: 0, status: every("rate-limit", protocol.StatusSuccess),
		session: func(t *testing.T, s e2eSession) {
			recovered(2, protocol.ErrRateLimit, false)(t, s)
			for _, r := range s.of(protocol.KindRetry) {
				assert.Equal(t, int64(20), r.DelayMS, "%s: the server's retry-after-ms is honoured", s.key)
			}
		},
		summary: throttled,
	},
	{
		name: "overloaded", http: true, wantCode: 0, status: every("overloaded", protocol.StatusSuccess),
		session: recovered(2, protocol.ErrOverloaded, false), summary: throttled,
	},
	{
		name: "overloaded-outage", http: true, wantCode: 1, status: every("overloaded-outage", protocol.StatusProvider),
		session: failed(protocol.ErrOverloaded, retriesBeforeGivingUp), summary: throttled,
	},
	{
		name: "server-error", http: true, wantCode: 0, status: every("server-error", protocol.StatusSuccess),
		session: recovered(1, protocol.ErrServer, false),
	},
	{
		name: "cut", http: true, wantCode: 0, status: every("cut", protocol.StatusSuccess),
		session: recovered(1, protocol.ErrNetwork, true),
	},
	{
		name: "stall-once", http: true, wantCode: 0, status: every("stall-once", protocol.StatusSuccess),
		session: recovered(1, protocol.ErrInactivity, true),
	},
	{
		name: "stall-always", http: true, wantCode: 1, status: every("stall-always", protocol.StatusInactivity),
		session: stalledOut,
	},
	{
		name: "malformed-once", http: true, wantCode: 0, status: every("malformed-once", protocol.StatusSuccess),
		session: recovered(1, protocol.ErrStream, true),
	},
	{
		name: "malformed-always", http: true, wantCode: 1, status: every("malformed-always", protocol.StatusProvider),
		session: failed(protocol.ErrStream, retriesBeforeGivingUp),
	},
	{
		name: "eof-once", http: true, wantCode: 0, status: every("eof-once", protocol.StatusSuccess),
		session: recovered(1, protocol.ErrStream, true),
	},
	{
		name: "eof-always", http: true, wantCode: 1, status: every("eof-always", protocol.StatusProvider),
		session: failed(protocol.ErrStream, retriesBeforeGivingUp),
	},
	{
		// The script fails only the first attempt: had the client retried, the session
		// would have succeeded. So error_auth proves there was exactly one attempt.
		name: "unauthorized", http: true, wantCode: 1, status: every("unauthorized", protocol.StatusAuth),
		session: func(t *testing.T, s e2eSession) {
			failed(protocol.ErrAuth, 0)(t, s)
			assert.Equal(t, 1, s.result.Attempts, s.key)
			assert.Contains(t, s.result.Error.Message, "HTTP 401", s.key)
		},
	},
	{
		name: "tool-timeout", wantCode: 0, status: every("tool-timeout", protocol.StatusSuccess),
		session: func(t *testing.T, s e2eSession) {
			results := s.of(protocol.KindToolResult)
			require.Len(t, results, 1, s.key)
			assert.True(t, results[0].Result.IsError, s.key)
			assert.Contains(t, results[0].Result.Content, "token=***", s.key)
			assert.Contains(t, results[0].Result.Content, "command timed out after 1 seconds", s.key)
			assert.Equal(t, 2, s.result.NumTurns, "%s: the session went on after the timeout", s.key)
		},
	},
	{
		name: "session-timeout", wantCode: 1, status: every("session-timeout", protocol.StatusTimeout),
		session: func(t *testing.T, s e2eSession) {
			require.NotNil(t, s.result.Error, s.key)
			assert.Equal(t, protocol.ErrTimeout, s.result.Error.Kind, s.key)
			assert.NotEmpty(t, s.of(protocol.KindToolCall), "%s: the timeout struck during the tool", s.key)
		},
	},
	{
		name: "panic", wantCode: 1,
		status: map[string]protocol.Status{"boom": protocol.StatusCrashed, "steady": protocol.StatusSuccess},
		session: func(t *testing.T, s e2eSession) {
			if s.result.Status == protocol.StatusSuccess {
				ranTool(t, s, false)
				return
			}
			require.NotNil(t, s.result.Error, s.key)
			assert.Equal(t, protocol.ErrPanic, s.result.Error.Kind, s.key)
			assert.Contains(t, s.result.Error.Message, "scripted model exploded", s.key)
		},
	},
	{
		name: "check-fails", wantCode: 1, status: every("check-fails", protocol.StatusChecks),
		session: func(t *testing.T, s e2eSession) {
			ranTool(t, s, false)
			require.Len(t, s.result.Checks, 1, s.key)
			c := s.result.Checks[0]
			assert.Equal(t, "final-answer", c.Name, s.key)
			assert.False(t, c.Passed, s.key)
			assert.Equal(t, 1, c.ExitCode, s.key)
			assert.Contains(t, c.Output, "token=***", "%s: check output is masked too", s.key)
			require.NotNil(t, s.result.Error, s.key)
			assert.Equal(t, protocol.ErrChecks, s.result.Error.Kind, s.key)
		},
	},
	{
		name: "invalid-output", wantCode: 1, status: every("invalid-output", protocol.StatusOutputSchema),
		session: func(t *testing.T, s e2eSession) {
			require.NotNil(t, s.result.Error, s.key)
			assert.Equal(t, protocol.ErrSchema, s.result.Error.Kind, s.key)
			assert.Equal(t, `{"answer": "forty-two"}`, s.result.Result, s.key)
			assert.Contains(t, []string{"", "null"}, string(s.result.StructuredOutput), "%s: no structured output", s.key)
		},
	},
}

// TestE2E runs every fault scenario on 100 sessions, at most e2eParallel at once, and
// checks each run end to end.
func TestE2E(t *testing.T) {
	skipShort(t)
	var scripts []string
	for _, sc := range e2eScenarios {
		if sc.http {
			abs, err := filepath.Abs(filepath.Join(e2eDir, "scripts", sc.name+".yaml"))
			require.NoError(t, err)
			scripts = append(scripts, sc.name+"="+abs)
		}
	}
	server := startFakeServer(t, scripts)
	slots := make(chan struct{}, e2eParallel)
	for _, sc := range e2eScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			slots <- struct{}{}
			defer func() { <-slots }()
			runScenario(t, sc, server)
		})
	}
}

// runScenario runs one scenario and checks everything the suite promises about it.
func runScenario(t *testing.T, sc e2eScenario, server string) {
	sec := newSecrets(t)
	marker := newMarker(t, sc.name)
	url := ""
	if sc.http {
		url = server
	}
	out := filepath.Join(t.TempDir(), "out")
	o := agentrun(t, invocation{bin: leakBin(t),
		args: runArgs(filepath.Join(e2eDir, sc.name+".yaml"), out),
		env:  runEnv(t, sec, url, marker),
	})
	t.Logf("%s: %d sessions in %s", sc.name, e2eSessions, o.elapsed.Round(10*time.Millisecond))
	assert.Equal(t, sc.wantCode, o.code, "exit code; stderr:\n%s", lastLines(o.stderr, 20))
	assertNoProcesses(t, marker)
	assertNoGoroutines(t, o.stderr)

	sessions, sum := verifyRun(t, out, e2eSessions)
	byStatus := map[protocol.Status]int{}
	for _, s := range sessions {
		want, ok := sc.status[s.result.JobID]
		require.True(t, ok, "unexpected job %s", s.result.JobID)
		assert.Equal(t, want, s.result.Status, "%s: %s", s.key, s.result.Result)
		byStatus[s.result.Status]++
		if sc.session != nil {
			sc.session(t, s)
		}
	}
	assert.Equal(t, byStatus, sum.Totals.ByStatus)
	if sc.summary != nil {
		sc.summary(t, sum)
	}
	ended := checkStdout(t, o.stdout)
	assert.Len(t, ended, e2eSessions, "stdout carries every session's result")
	assertNoSecrets(t, out, sec.values(), o.stdout, o.stderr)
}

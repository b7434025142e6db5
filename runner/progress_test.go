package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sink"
)

// progressRecorder keeps what the progress display writes and closes beat at the first
// heartbeat line.
type progressRecorder struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	once sync.Once
	beat chan struct{}
}

var heartbeatLine = regexp.MustCompile(`^\[\d+/\d+ done, \d+ running, \d+ failed, \$\d+\.\d{4}, \d+s\]$`)

func (p *progressRecorder) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if heartbeatLine.Match(bytes.TrimSpace(b)) {
		p.once.Do(func() { close(p.beat) })
	}
	return p.buf.Write(b)
}

func (p *progressRecorder) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

const progressSpec = `version: 1
concurrency: 3
defaults: {tools: [Write]}
jobs:
  - {id: a, model: success, prompt: Write.}
  - {id: b, model: auth, prompt: Fail.}
  - {id: gate, model: gate, prompt: Wait for a heartbeat.}
`

// retryJob fails its first attempt and is run again: the progress reports it once.
const retryJob = "  - {id: retry, model: retry, retries: 1, prompt: Try twice.}\n"

func TestProgressPlain(t *testing.T) {
	rec := &progressRecorder{beat: make(chan struct{})}
	p := newInProcess(loadScripts(t))
	// The gated session finishes only after a heartbeat was written, so the run lasts
	// at least one heartbeat interval, whatever the machine's speed.
	p.fakes["gate"] = gated(make(chan string, 1), rec.beat)
	out := filepath.Join(t.TempDir(), "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: p, Progress: rec, Heartbeat: 10 * time.Millisecond}).
		Run(context.Background(), writeSpec(t, t.TempDir(), progressSpec+retryJob))
	require.NoError(t, err)
	verifyOut(t, out, sum)

	lines := strings.Split(strings.TrimSuffix(rec.String(), "\n"), "\n")
	var finished, beats []string
	for _, l := range lines {
		switch {
		case heartbeatLine.MatchString(l):
			beats = append(beats, l)
		default:
			finished = append(finished, l)
		}
	}
	assert.NotEmpty(t, beats, "a heartbeat while nothing finishes")
	assert.Regexp(t, `^\[[0-3]/4 done, [1-3] running, [01] failed, \$0\.0000, \d+s\]$`, beats[0])
	require.Len(t, finished, 4, "one line per finished session, a retried one too: %q", lines)
	byKey := map[string]string{}
	for _, l := range finished {
		fields := strings.Fields(l)
		require.GreaterOrEqual(t, len(fields), 3, l)
		byKey[fields[1]] = l
	}
	assert.Regexp(t, `^✓ a success · 2 turns · [\d.]+m?s · \$0\.0000$`, byKey["a"])
	assert.Regexp(t, `^✗ b error_auth · 0 turns · [\d.]+m?s · \$0\.0000 · HTTP 401: invalid x-api-key sk-ant`, byKey["b"])
	assert.Regexp(t, `^✓ gate success · 1 turns · `, byKey["gate"])
	assert.Regexp(t, `^✓ retry success · 1 turns · `, byKey["retry"], "the final attempt's result")
	assert.NotContains(t, rec.String(), "\033", "plain progress has no escape sequences")
}

// TestProgressLive runs with a live status line, with stdout elsewhere and on the same
// terminal; the bytes are checked here, the screen they make in cmd/agentrun's pty test.
func TestProgressLive(t *testing.T) {
	tests := []struct {
		name   string
		shared bool
	}{
		{name: "stdout elsewhere"},
		{name: "stdout on the terminal", shared: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &progressRecorder{beat: make(chan struct{})}
			term := sink.NewTerminal(rec, func() int { return 300 })
			var elsewhere bytes.Buffer
			var stdout io.Writer = &elsewhere
			if tt.shared {
				stdout = term.Lines(rec)
			}
			p := newInProcess(loadScripts(t))
			release := make(chan struct{})
			close(release)
			p.fakes["gate"] = gated(make(chan string, 1), release)
			out := filepath.Join(t.TempDir(), "out")
			sum, err := newRunner(t, runner.Options{Out: out, Providers: p, Progress: term.Lines(rec), Status: term,
				Color: true, Stdout: stdout, StdoutShared: tt.shared}).
				Run(context.Background(), writeSpec(t, t.TempDir(), progressSpec+retryJob))
			require.NoError(t, err)
			verifyOut(t, out, sum)

			text := rec.String()
			assert.Contains(t, text, "\r\033[K", "the status line is redrawn in place")
			assert.Regexp(t, `│ (a|b|gate|retry): waiting for model`, text, "what a session does")
			assert.Regexp(t, `│ .*a: Write`, text, "the tool a session runs")
			assert.Regexp(t, `\d/4 done, \d running, \d failed, \$0\.0000, \d+s, ETA \d+s │ `, text,
				"an ETA once a session finished")
			assert.Regexp(t, `\r\033\[K4/4 done, 0 running, 1 failed, \$0\.0000, \d+s\n$`, text, "the last status stays")
			transcript := elsewhere.String()
			if tt.shared {
				transcript = text
			}
			for key, end := range map[string]string{"a": "✓ success", "b": "✗ error_auth", "gate": "✓ success",
				"retry": "✓ success"} {
				mark, status, _ := strings.Cut(end, " ")
				own := regexp.MustCompile(regexp.QuoteMeta(mark + "\033[0m " + key + " " + status + " · "))
				result := regexp.MustCompile(regexp.QuoteMeta("[" + key + "] " + end + " · "))
				if tt.shared {
					assert.Empty(t, own.FindAllString(text, -1), "%s: the transcript already showed the result", key)
					assert.Len(t, result.FindAllString(transcript, -1), 1, "%s: the transcript's result line", key)
				} else {
					assert.Len(t, own.FindAllString(text, -1), 1, "%s: one line when it finished", key)
				}
			}
		})
	}
}

func TestRunStdout(t *testing.T) {
	tests := []struct {
		name   string
		format sink.Format
		check  func(t *testing.T, line string, sessions map[string]string)
	}{
		{
			name: "text", format: sink.FormatText,
			check: func(t *testing.T, line string, _ map[string]string) {
				assert.Regexp(t, `^\[(a|b|gate)\] `, line, "every line carries its session key")
			},
		},
		{
			name: "stream-json", format: sink.FormatStreamJSON,
			check: func(t *testing.T, line string, sessions map[string]string) {
				_, _, err := protocol.ParseEvent([]byte(line))
				require.NoError(t, err, line)
				var env struct {
					SessionID string `json:"session_id"`
					JobID     string `json:"job_id"`
				}
				require.NoError(t, json.Unmarshal([]byte(line), &env))
				assert.Equal(t, sessions[env.JobID], env.SessionID, "every line names its session and job: %s", line)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newInProcess(loadScripts(t))
			release := make(chan struct{})
			close(release)
			p.fakes["gate"] = gated(make(chan string, 1), release)
			var stdout bytes.Buffer
			out := filepath.Join(t.TempDir(), "out")
			sum, err := newRunner(t, runner.Options{Out: out, Providers: p, Format: tt.format, Stdout: &stdout}).
				Run(context.Background(), writeSpec(t, t.TempDir(), progressSpec))
			require.NoError(t, err)
			verifyOut(t, out, sum)
			sessions := map[string]string{}
			streamLines := 0
			for _, r := range sum.Sessions {
				sessions[r.JobID] = r.SessionID
				streamLines += len(readEvents(t, filepath.Join(out, runner.SessionsDir, r.Key, runner.StreamFile), false))
			}
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			for _, l := range lines {
				tt.check(t, l, sessions)
			}
			if tt.format == sink.FormatStreamJSON {
				assert.Len(t, lines, streamLines, "stdout carries every session's events and nothing else")
			}
		})
	}
}

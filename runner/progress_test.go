package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
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

func TestProgressPlain(t *testing.T) {
	rec := &progressRecorder{beat: make(chan struct{})}
	p := newInProcess(loadScripts(t))
	// The gated session finishes only after a heartbeat was written, so the run lasts
	// at least one heartbeat interval, whatever the machine's speed.
	p.fakes["gate"] = gated(make(chan string, 1), rec.beat)
	out := filepath.Join(t.TempDir(), "out")
	sum, err := runner.New(runner.Options{Out: out, Providers: p, Progress: rec, Heartbeat: 10 * time.Millisecond}).
		Run(context.Background(), writeSpec(t, t.TempDir(), progressSpec))
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
	assert.Regexp(t, `^\[[0-2]/3 done, [1-3] running, [01] failed, \$0\.0000, \d+s\]$`, beats[0])
	require.Len(t, finished, 3, "one line per finished session: %q", lines)
	byKey := map[string]string{}
	for _, l := range finished {
		fields := strings.Fields(l)
		require.GreaterOrEqual(t, len(fields), 3, l)
		byKey[fields[1]] = l
	}
	assert.Regexp(t, `^✓ a success · 2 turns · [\d.]+m?s · \$0\.0000$`, byKey["a"])
	assert.Regexp(t, `^✗ b error_auth · 0 turns · [\d.]+m?s · \$0\.0000 · HTTP 401: invalid x-api-key sk-ant`, byKey["b"])
	assert.Regexp(t, `^✓ gate success · 1 turns · `, byKey["gate"])
	assert.NotContains(t, rec.String(), "\033", "plain progress has no escape sequences")
}

func TestProgressInteractive(t *testing.T) {
	rec := &progressRecorder{beat: make(chan struct{})}
	p := newInProcess(loadScripts(t))
	release := make(chan struct{})
	close(release)
	p.fakes["gate"] = gated(make(chan string, 1), release)
	out := filepath.Join(t.TempDir(), "out")
	sum, err := runner.New(runner.Options{Out: out, Providers: p, Progress: rec, Interactive: true, Color: true}).
		Run(context.Background(), writeSpec(t, t.TempDir(), progressSpec))
	require.NoError(t, err)
	verifyOut(t, out, sum)

	text := rec.String()
	assert.Contains(t, text, "\r\033[K", "the status line is redrawn in place")
	assert.Contains(t, text, "\033[32m✓\033[0m a success")
	assert.Contains(t, text, "\033[31m✗\033[0m b error_auth")
	assert.Regexp(t, `\r\033\[K3/3 done, 0 running, 1 failed, \$0\.0000, \d+s\n$`, text, "the last status stays")
}

func TestRunStdout(t *testing.T) {
	tests := []struct {
		name   string
		format runner.Format
		check  func(t *testing.T, line string, sessions map[string]string)
	}{
		{
			name: "text", format: runner.FormatText,
			check: func(t *testing.T, line string, _ map[string]string) {
				assert.Regexp(t, `^\[(a|b|gate)\] `, line, "every line carries its session key")
			},
		},
		{
			name: "stream-json", format: runner.FormatStreamJSON,
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
			sum, err := runner.New(runner.Options{Out: out, Providers: p, Format: tt.format, Stdout: &stdout}).
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
			if tt.format == runner.FormatStreamJSON {
				assert.Len(t, lines, streamLines, "stdout carries every session's events and nothing else")
			}
		})
	}
}

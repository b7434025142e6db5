package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
)

// Helpers of the tests that run the agentrun binary: the fault suite (the e2e build
// tag) and the rest of the package's tests share them.

// signalDeadline is how soon an interrupted run must have exited with every result and
// summary written; GitHub Actions allows about ten seconds before SIGKILL.
const signalDeadline = 5 * time.Second

// e2eSecrets are the values given to a run that must appear in no artifact: both API
// keys and the token the spec names in secrets (which the tools print).
type e2eSecrets struct {
	anthropicKey, openaiKey, token string
}

func newSecrets(t *testing.T) e2eSecrets {
	t.Helper()
	return e2eSecrets{
		anthropicKey: "sk-ant-e2e-" + randomHex(t),
		openaiKey:    "sk-proj-e2e-" + randomHex(t),
		token:        "tok-e2e-" + randomHex(t),
	}
}

func (s e2eSecrets) values() []string { return []string{s.anthropicKey, s.openaiKey, s.token} }

// env is the environment of a run: the keys, the token, and the fake server's address
// for both provider families (empty when the run needs none).
func (s e2eSecrets) env(serverURL string) []string {
	env := []string{"ANTHROPIC_API_KEY=" + s.anthropicKey, "OPENAI_API_KEY=" + s.openaiKey, "E2E_TOKEN=" + s.token}
	if serverURL != "" {
		env = append(env, "ANTHROPIC_BASE_URL="+serverURL, "OPENAI_BASE_URL="+serverURL)
	}
	return env
}

func randomHex(t *testing.T) string {
	t.Helper()
	var b [8]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	return hex.EncodeToString(b[:])
}

// runArgs are the flags of every run of the suite: JSON logs on stderr, every event on
// stdout.
func runArgs(spec, out string, extra ...string) []string {
	args := []string{"run", spec, "--out", out, "--progress", "off", "--log-format", "json", "--output-format", "stream-json"}
	return append(args, extra...)
}

// startFakeServer starts `agentrun fake-server` on a free loopback port with the given
// MODEL=FILE scripts and further flags, and returns its base URL; the server is stopped
// with SIGTERM when the test ends.
func startFakeServer(t *testing.T, scripts []string, flags ...string) string {
	t.Helper()
	args := append([]string(nil), flags...)
	for _, s := range scripts {
		args = append(args, "--script", s)
	}
	return startFakeServerArgs(t, args...)
}

// startFakeServerArgs starts `agentrun fake-server` on a free loopback port with more
// arguments and returns its base URL, as startFakeServer does.
func startFakeServerArgs(t *testing.T, extra ...string) string {
	t.Helper()
	args := append([]string{"fake-server", "--addr", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(agentrunBin(t), args...)
	cmd.Env = baseEnv(t)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState != nil {
			return
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			_ = cmd.Process.Kill()
		}
		assert.NoError(t, cmd.Wait(), "fake-server exits 0 on SIGTERM; stderr: %s", stderr.String())
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // stderr is complete only after Wait
		t.Fatalf("fake-server did not start: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+) `).FindStringSubmatch(line)
	require.NotNil(t, m, line)
	return m[1] + "/v1"
}

// assertNoGoroutines reads the goroutine report of a run of leakBin from its stderr and
// checks that it lists none.
func assertNoGoroutines(t *testing.T, stderr string) {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		var r leakReport
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &r) != nil || r.Msg != goroutineReport {
			continue
		}
		assert.Empty(t, r.Leaks, "goroutines alive after the run")
		return
	}
	t.Errorf("no goroutine report in the run's stderr (a run of leakBin?):\n%s", stderr)
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// startAgentrun starts leakBin, the agentrun command with its goroutine report, in the
// background with env; the test kills it if it is still running at the end.
func startAgentrun(t *testing.T, env []string, args ...string) (cmd *exec.Cmd, stdout, stderr *bytes.Buffer) {
	t.Helper()
	cmd = exec.Command(leakBin(t), args...)
	cmd.Env = env
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, stdout, stderr
}

// streamsWith counts the sessions under out whose stream.jsonl holds s.
func streamsWith(out, s string) int {
	files, _ := filepath.Glob(filepath.Join(out, "sessions", "*", "stream.jsonl"))
	n := 0
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(s)) {
			n++
		}
	}
	return n
}

// resultFiles reads every session's result.json under out, by session key.
func resultFiles(t *testing.T, out string) map[string]protocol.Result {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(out, "sessions", "*", "result.json"))
	require.NoError(t, err)
	got := map[string]protocol.Result{}
	for _, f := range files {
		var r protocol.Result
		readJSON(t, f, &r)
		require.NotEmpty(t, r.SessionID, f)
		got[filepath.Base(filepath.Dir(f))] = r
	}
	return got
}

// exitCode waits for cmd and returns its exit code.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	return ee.ExitCode()
}

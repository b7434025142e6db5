package main

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyScript shows, through a tool, whether an API key reached the tool's environment.
const keyScript = `steps:
  - text: Checking the environment.
    tool_calls:
      - name: Bash
        input: {command: 'echo "keys=[$ANTHROPIC_API_KEY$OPENAI_API_KEY]"'}
  - text: Done.
`

// TestFakeServer runs sessions against the fake server in each wire format with an API
// key set, checks that the key never reaches tools or the output folder, and stops the
// server with SIGTERM.
func TestFakeServer(t *testing.T) {
	t.Parallel()
	const key = "test-key-123"
	dir := t.TempDir()
	script := writeFile(t, dir, "server.yaml", keyScript)
	cmd := exec.Command(agentrunBin(t), "fake-server", "--addr", "127.0.0.1:0", "--default-script", script)
	cmd.Env = baseEnv(t)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	m := regexp.MustCompile(`listening on http://(127\.0\.0\.1:\d+) `).FindStringSubmatch(line)
	require.NotNil(t, m, line)
	addr := m[1]

	tests := []struct {
		name         string
		env          []string
		args         []string
		wantProvider string
	}{
		{name: "anthropic", env: []string{"ANTHROPIC_BASE_URL=http://" + addr + "/v1", "ANTHROPIC_API_KEY=" + key}, wantProvider: "anthropic"},
		{name: "openai", env: []string{"OPENAI_BASE_URL=http://" + addr + "/v1", "OPENAI_API_KEY=" + key}, wantProvider: "openai"},
		{name: "responses", env: []string{"OPENAI_BASE_URL=http://" + addr + "/v1", "OPENAI_API_KEY=" + key},
			args: []string{"--provider", "responses"}, wantProvider: "responses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := specDir(t, smallSpec("true"))
			out := filepath.Join(filepath.Dir(spec), "out")
			args := append([]string{"run", spec, "--out", out, "--output-format", "stream-json"}, tt.args...)
			o := agentrun(t, invocation{args: args, env: baseEnv(t, tt.env...)})
			require.Equal(t, 0, o.code, o.stderr)
			evs := jsonLines(t, o.stdout)
			assert.Equal(t, tt.wantProvider, evs[0]["provider"])
			assert.NotContains(t, o.stdout+o.stderr, key)

			transcript, err := os.ReadFile(filepath.Join(out, "sessions", "write", "transcript.txt"))
			require.NoError(t, err)
			assert.Contains(t, string(transcript), "keys=[]", "tools never see the API keys")
			files := 0
			err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				files++
				assert.NotContains(t, string(b), key, "%s holds the API key", p)
				return nil
			})
			require.NoError(t, err)
			assert.Greater(t, files, 15)
		})
	}

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	stopped = true
	assert.NoError(t, err, "fake-server exits 0 on SIGTERM; stderr: %s", stderr.String())
}

package scripted_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/transport/scripted"
)

// sdkScripts are the responses the SDKs read, by model name: answers in every shape
// the handler sends, and its faults.
var sdkScripts = map[string]string{
	"text":        "steps:\n  - thinking: Let me think about it.\n    text: Hello from the script, ünïcödé.\n",
	"tools":       "steps:\n  - text: Running both.\n    tool_calls:\n      - {name: Bash, input: {command: echo one}}\n      - {name: Bash, input: {command: echo two}}\n",
	"overloaded":  "steps:\n  - text: never\n    fault: {status: 529, times: 1000}\n",
	"ratelimit":   "steps:\n  - text: never\n    fault: {status: 429, retry_after_ms: 10, times: 1000}\n",
	"cut":         "steps:\n  - text: A long answer that is cut in the middle of the stream.\n    fault: {cut: true, times: 1000}\n",
	"error_event": "steps:\n  - text: never\n    fault: {error_event: overloaded_error, times: 1000}\n",
}

// sdkRead is one line of testdata/sdk/read.cjs.
type sdkRead struct {
	Model    string `json:"model"`
	OK       bool   `json:"ok"`
	Crash    string `json:"crash"`
	Status   *int   `json:"status"`
	Error    string `json:"error"`
	Text     string `json:"text"`
	Thinking string `json:"thinking"`
	Calls    []struct {
		Name  string            `json:"name"`
		Input map[string]string `json:"input"`
	} `json:"calls"`
}

// TestOfficialSDKs has the official openai and @anthropic-ai/sdk npm packages read the
// scripted handler over loopback HTTP in all three wire formats, faults included: an
// answer must read as the script says, a fault as the SDK's own error, and nothing may
// crash the SDK. The packages (testdata/sdk/package.json) are installed once into the
// user cache directory; the test skips only when node or npm is missing.
func TestOfficialSDKs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the official SDKs in node (not with -short)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the official SDK readers cannot run")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the official SDK readers cannot be installed")
	}
	t.Parallel()
	dir := installSDKs(t)
	scripts := map[string]*scripted.Script{}
	for name, src := range sdkScripts {
		scripts[name] = mustParse(t, src)
	}
	srv := httptest.NewServer(scripted.New(scripted.Options{Scripts: scripts}).Handler())
	t.Cleanup(srv.Close)
	models := []string{"text", "tools", "overloaded", "ratelimit", "cut", "error_event"}
	formats := map[string]string{
		"anthropic": srv.URL, // as the Anthropic SDK writes a base URL: no /v1
		"chat":      srv.URL + "/v1",
		"responses": srv.URL + "/v1",
	}
	for format, base := range formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), node, append([]string{filepath.Join("testdata", "sdk", "read.cjs"), format, base}, models...)...)
			cmd.Env = append(os.Environ(), "SDK_DIR="+dir)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, "node: %s", stderr.String())
			got := map[string]sdkRead{}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				var r sdkRead
				require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
				got[r.Model] = r
			}
			require.Len(t, got, len(models), "one line per model: %s", out)
			for _, m := range models {
				r := got[m]
				assert.Empty(t, r.Crash, "%s: the SDK crashed", m)
			}
			text := got["text"]
			if assert.True(t, text.OK, "text: %s", text.Error) {
				assert.Equal(t, "Hello from the script, ünïcödé.", text.Text)
				if format != "chat" { // Chat has no standard thinking field the SDK assembles
					assert.Equal(t, "Let me think about it.", text.Thinking)
				}
			}
			tools := got["tools"]
			if assert.True(t, tools.OK, "tools: %s", tools.Error) {
				assert.Equal(t, "Running both.", tools.Text)
				if assert.Len(t, tools.Calls, 2) {
					assert.Equal(t, "Bash", tools.Calls[0].Name)
					assert.Equal(t, map[string]string{"command": "echo one"}, tools.Calls[0].Input)
					assert.Equal(t, map[string]string{"command": "echo two"}, tools.Calls[1].Input)
				}
			}
			for m, status := range map[string]int{"overloaded": 529, "ratelimit": 429} {
				r := got[m]
				assert.False(t, r.OK, m)
				if assert.NotNil(t, r.Status, "%s: %s", m, r.Error) {
					assert.Equal(t, status, *r.Status, m)
				}
			}
			for _, m := range []string{"cut", "error_event"} {
				assert.False(t, got[m].OK, "%s is an error of the SDK", m)
			}
		})
	}
}

// installSDKs installs testdata/sdk/package.json into a folder of the user cache
// directory named by its hash, once, and returns that folder.
func installSDKs(t *testing.T) string {
	t.Helper()
	pkg, err := os.ReadFile(filepath.Join("testdata", "sdk", "package.json"))
	require.NoError(t, err)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256(pkg)
	dir := filepath.Join(cache, "agentrun", "sdk-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".agentrun-installed")); err == nil {
		return dir
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	require.NoError(t, err)
	defer func() { assert.NoError(t, os.RemoveAll(tmp)) }()
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "package.json"), pkg, 0o644))
	cmd := exec.CommandContext(t.Context(), "npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm install: %s", strings.TrimSpace(string(out)))
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "node_modules", ".agentrun-installed"), nil, 0o644))
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		_, statErr := os.Stat(filepath.Join(dir, "node_modules", ".agentrun-installed"))
		require.NoError(t, statErr, "install into %s: %v", dir, err) // another test process won the race
	}
	return dir
}

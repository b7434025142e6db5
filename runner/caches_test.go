package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
)

// TestCacheIsTheSessionsOwn: a build cache in sandbox.caches is code that the user's
// next build links, and that the next session's reads. At level strict the tools read
// what it holds and write over it in a layer of their own: they see their writes, a
// changed entry and a new one, and after the session the cache on the host holds
// neither, nor does the next session see them. At level landlock a cache is writable,
// as a writable path is (Landlock cannot layer a folder): what the tools write stays.
func TestCacheIsTheSessionsOwn(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		cache := filepath.Join(dir, "cache")
		require.NoError(t, os.MkdirAll(filepath.Join(cache, "ab"), 0o755))
		entry := filepath.Join(cache, "ab", "entry-d")
		require.NoError(t, os.WriteFile(entry, []byte("the compiled package\n"), 0o644))
		cmd := fmt.Sprintf("echo was: $(cat %[1]s/ab/entry-d); echo poisoned > %[1]s/ab/entry-d && echo new > %[1]s/ab/added-d && "+
			"echo now: $(cat %[1]s/ab/entry-d %[1]s/ab/added-d); echo done", cache)
		_, out, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s, caches: [%q]}, workspace: {dir: %q, mode: copy}", level, cache, dir), cmd)
		assert.Contains(t, output, "was: the compiled package\n", "the tools read no cache")
		assert.Contains(t, output, "now: poisoned new\n", "the tools could not write the cache")
		if level == sandbox.LevelLandlock {
			assert.Equal(t, "poisoned\n", readFile(t, entry), "at level landlock a cache is writable")
			return
		}
		assert.Equal(t, "the compiled package\n", readFile(t, entry), "ESCAPE: the tools changed the host's cache")
		assert.NoFileExists(t, filepath.Join(cache, "ab", "added-d"), "ESCAPE: the tools added to the host's cache")
		layers, err := os.ReadDir(filepath.Join(out, runner.WorkspacesDir, ".caches"))
		require.NoError(t, err)
		assert.Empty(t, layers, "the session's layer stays after it")
	})
}

// TestCacheKeepsItsHiddenStores: a cache that holds a credential store (~/.cache,
// which holds Hugging Face's token) hides it at level strict, through the layer, while
// the tools may still write the cache; level landlock, which cannot hide a path in a
// folder the tools may write, refuses the session.
func TestCacheKeepsItsHiddenStores(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		home := filepath.Join(dir, "home")
		token := filepath.Join(home, ".cache", "huggingface", "token")
		require.NoError(t, os.MkdirAll(filepath.Dir(token), 0o700))
		require.NoError(t, os.WriteFile(token, []byte("hf_secrettoken\n"), 0o600))
		scripts := scriptsWith(t, "agent", "steps:\n  - tool_calls: [{name: Bash, input: {command: \"cat ~/.cache/huggingface/token; python3 -c 'import os; open(os.path.expanduser(\\\"~/.cache/mine\\\"), \\\"w\\\").write(\\\"written \\\")' && cat ~/.cache/mine; echo done\"}}]\n  - text: \"Done.\"\n")
		out := filepath.Join(dir, "out")
		spec := fmt.Sprintf("version: 1\ndefaults: {tools: [Bash], bash_mode: \"0467\", env: {PATH: /usr/bin:/bin, HOME: %q}, sandbox: {level: %s, caches: [\"~/.cache\"]}, workspace: {dir: %q, mode: copy}}\n"+
			"jobs:\n  - {id: agent, model: agent, prompt: Go.}\n", home, level, filepath.Join(dir, "ws"))
		require.NoError(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
		sum, err := newRunner(t, runner.Options{Out: out, Home: home, Providers: newInProcess(scripts), Environ: os.Environ()}).
			Run(context.Background(), writeSpec(t, dir, spec))
		require.NoError(t, err)
		require.Len(t, sum.Sessions, 1)
		if level == sandbox.LevelLandlock {
			assert.Equal(t, protocol.StatusSandbox, sum.Sessions[0].Status, sum.Text())
			return
		}
		results := toolResults(t, out, "agent")
		require.Len(t, results, 1)
		require.Contains(t, results[0].Content, "done")
		assert.NotContains(t, results[0].Content, "hf_secrettoken", "LEAK: the tools read the store in the cache")
		assert.Contains(t, results[0].Content, "written done", "the tools could not write the cache")
		assert.NoFileExists(t, filepath.Join(home, ".cache", "mine"))
	})
}

// TestWritableBuildCacheIsWarned: a spec that makes a build cache writable, or a folder
// that holds one, has the run say so, once for each, and name sandbox.caches; a spec
// that makes it a cache has no such warning.
func TestWritableBuildCacheIsWarned(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		sandbox string
		want    []string
	}{
		"the Go build cache": {"{writable: [~/.cache/go-build], level: off}", []string{"caches ~/.cache/go-build writable"}},
		"the home's caches":  {"{writable: [~/.cache], level: off}", []string{"caches ~/.cache/go-build, ~/.cache/pip, ~/.cache/yarn writable"}},
		"a cache":            {"{caches: [~/.cache/go-build], level: off}", nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			spec := writeSpec(t, dir, "version: 1\ndefaults: {model: success, sandbox: "+c.sandbox+"}\njobs:\n  - {id: a, prompt: Write the notes., repeat: 2}\n")
			sum, err := newRunner(t, runner.Options{Out: filepath.Join(dir, "out"), Home: dir, Providers: newInProcess(loadScripts(t))}).
				Run(context.Background(), spec)
			require.NoError(t, err)
			var got []string
			for _, w := range sum.Warnings {
				if strings.Contains(w, "sandbox.caches") {
					got = append(got, w)
				}
			}
			require.Len(t, got, len(c.want), "%q", sum.Warnings)
			for i, w := range c.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

// TestRunRemovesLeftLayers: a killed run leaves its sessions' layers over their caches,
// whose overlay work folders the kernel made without permissions; the next run in the
// folder removes them.
func TestRunRemovesLeftLayers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	work := filepath.Join(out, runner.WorkspacesDir, ".caches", "cache-123", "0", "work", "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(work, "x"), nil, 0o644))
	require.NoError(t, os.Chmod(work, 0))
	spec := writeSpec(t, dir, "version: 1\ndefaults: {model: success, sandbox: {level: off}}\njobs:\n  - {id: a, prompt: Write the notes.}\n")
	_, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t))}).Run(context.Background(), spec)
	require.NoError(t, err)
	assert.NoDirExists(t, filepath.Join(out, runner.WorkspacesDir, ".caches"))
}

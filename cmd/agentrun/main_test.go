package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/testbuild"
	"github.com/agentrun/agentrun/testexit"
	"github.com/agentrun/agentrun/worker"
)

// builds are the agentrun binary under test and leak-checked build of it (leakBin), each
// with its agentrun-worker beside it, of the same build: the test binary carries no VCS
// stamp, so neither does the leak-checked build's worker. The agentrun binary is built
// with -trimpath, as TestReadme's quick start is, so that the clone's build finds every
// package compiled here in the build cache.
var (
	agentrunBuild = testbuild.New("agentrun",
		testbuild.Cmd{File: "agentrun", Args: []string{"build", "-buildvcs=auto", "-trimpath", "."}},
		testbuild.Cmd{File: worker.BinaryName, Args: []string{"build", "-buildvcs=auto", "-trimpath", "../agentrun-worker"}})
	leakBuild = testbuild.New("leakcheck",
		testbuild.Cmd{File: leakBinName, Args: []string{"test", "-c", "."}},
		testbuild.Cmd{File: worker.BinaryName, Args: []string{"build", "-buildvcs=false", "../agentrun-worker"}})
)

// agentrunBin returns the path of the agentrun binary under test, built on the first
// call.
func agentrunBin(tb testing.TB) string {
	tb.Helper()
	skipBinaryInShort(tb)
	return agentrunBuild.Path(tb, "agentrun")
}

// leakBin returns the path of the leak-checked build, built on the first call.
func leakBin(tb testing.TB) string {
	tb.Helper()
	skipBinaryInShort(tb)
	return leakBuild.Path(tb, leakBinName)
}

// skipBinaryInShort skips a test that runs the agentrun binary when the tests are -short.
func skipBinaryInShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("runs the agentrun binary (not with -short)")
	}
}

// goEnv holds the Go toolchain's cache and module folders, so that checks running go
// inside the tests' fresh HOME reuse the warm caches.
var goEnv []string

func TestMain(m *testing.M) {
	worker.ExitIfWorker() // leakBin's sessions run their tools in workers of leakBin
	if filepath.Base(os.Args[0]) == leakBinName {
		os.Exit(leakCheckedCLI()) // this binary is leakBin
	}
	var err error
	if goEnv, err = toolchainEnv(); err != nil {
		fmt.Fprintln(os.Stderr, "agentrun tests:", err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit))
}

// toolchainEnv returns GOCACHE, GOPATH and GOMODCACHE as KEY=VALUE pairs.
func toolchainEnv() ([]string, error) {
	out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOPATH", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	var vars map[string]string
	if err := json.Unmarshal(out, &vars); err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	var env []string
	for _, k := range []string{"GOCACHE", "GOPATH", "GOMODCACHE"} {
		if vars[k] != "" {
			env = append(env, k+"="+vars[k])
		}
	}
	return env, nil
}

// baseEnv is the explicit environment of a subprocess: HOME and AGENTRUN_HOME in
// temporary folders, PATH and the Go caches kept, no API keys, then extra on top.
func baseEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	linkBuildCache(t, home)
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"AGENTRUN_HOME=" + filepath.Join(home, ".agentrun"),
		"NO_COLOR=1",
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	env = append(env, goEnv...)
	return append(env, extra...)
}

// linkBuildCache makes home's ~/.cache/go-build, the folder the examples' sandboxes
// make writable for the tools' go test and go vet, a link to the suite's own build
// cache, so that the tools in the sandbox do not build the standard library from cold.
func linkBuildCache(t *testing.T, home string) {
	t.Helper()
	for _, kv := range goEnv {
		if cache, ok := strings.CutPrefix(kv, "GOCACHE="); ok {
			link := filepath.Join(home, ".cache", "go-build")
			require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
			require.NoError(t, os.Symlink(cache, link))
		}
	}
}

// invocation is one run of the binary.
type invocation struct {
	// bin is the binary to run: agentrunBin when "", leakBin to check for leaks.
	bin   string
	args  []string
	env   []string // nil: baseEnv
	dir   string   // working folder; "" is the test's
	stdin string
}

// outcome is what a finished run of the binary produced.
type outcome struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// agentrun runs the binary to completion (at most two minutes) and returns its output
// and exit code.
func agentrun(t *testing.T, inv invocation) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := inv.bin
	if bin == "" {
		bin = agentrunBin(t)
	}
	cmd := exec.CommandContext(ctx, bin, inv.args...)
	cmd.Env = inv.env
	if cmd.Env == nil {
		cmd.Env = baseEnv(t)
	}
	cmd.Dir = inv.dir
	cmd.Stdin = strings.NewReader(inv.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	o := outcome{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "agentrun %s: %v\nstderr:\n%s", strings.Join(inv.args, " "), err, o.stderr)
		o.code = ee.ExitCode()
	}
	return o
}

// writeFile writes content to dir/name, creating folders, and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// jsonLines parses every line of s as a JSON object; it fails the test on anything
// else, blank lines included.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "line %d is not a JSON object: %q", i+1, line)
		out = append(out, m)
	}
	return out
}

// readJSON decodes the JSON file at path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), path)
}

// mustJSON marshals v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

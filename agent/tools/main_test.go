package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentrun/agentrun/policy"
	"github.com/agentrun/agentrun/testexit"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit)) }

// tempDir is t.TempDir with symbolic links resolved, as Env.Workspace requires.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// newEnv returns an Env with a fresh workspace and home directory and the given mode.
func newEnv(t testing.TB, mode string) *Env {
	t.Helper()
	p, err := policy.Parse(mode)
	require.NoError(t, err)
	return &Env{Workspace: tempDir(t), Home: tempDir(t), Policy: p, Timeout: time.Minute}
}

// writeTree creates files (relative path → content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// call runs a tool with an input value marshalled to JSON.
func call(t testing.TB, tool Tool, env *Env, input any) Result {
	t.Helper()
	b, err := json.Marshal(input)
	require.NoError(t, err)
	return tool.Run(context.Background(), Call{Input: b, Env: env})
}

// in is shorthand for a tool input object.
type in = map[string]any

package runner

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/fuzzguard"
	"github.com/agentrun/agentrun/testbuild"
)

// TestRunnerInstall starts a shell named bin/Runner.Worker (bin/Agent.Worker), as
// GitHub's runner (Azure's agent) runs a job's steps, with a child: from the child, the
// install folder is found, and its registration and logs are in what the tools must
// not see.
func TestRunnerInstall(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ exe, env string }{{"Runner.Worker", "GITHUB_ACTIONS=true"}, {"Agent.Worker", "TF_BUILD=True"}} {
		t.Run(c.exe, func(t *testing.T) {
			t.Parallel()
			runnerInstallFound(t, c.exe, c.env)
		})
	}
}

// runnerInstallFound is TestRunnerInstall with the worker's executable named exe, and
// env the CI system's variable.
func runnerInstallFound(t *testing.T, exe, env string) {
	install := t.TempDir()
	child := startAncestor(t, filepath.Join(install, "bin", exe), install)

	hidden := ciState([]string{env}, "/usr/bin/agentrun", child)
	assert.Contains(t, hidden, filepath.Join(install, ".credentials_rsaparams"))
	assert.Contains(t, hidden, filepath.Join(install, "_diag"))

	assert.Equal(t, runnerFiles(child), hidden)
	assert.Empty(t, runnerFiles(os.Getpid()), "no runner above this test")
	assert.Empty(t, ciState([]string{"GITHUB_ACTIONS=false", "RUNNER_TEMP=/tmp"}, "/usr/bin/agentrun", child))
}

// TestActRunnerRegistration starts a shell named act_runner (forgejo-runner), as Gitea's
// (Forgejo's) runner runs a job's steps on its host, in the folder it was registered
// in, with a child: from the child, the runner's registration there, whose token takes
// the runner's next jobs and their secrets, is in what the tools must not see.
func TestActRunnerRegistration(t *testing.T) {
	t.Parallel()
	for _, exe := range []string{"act_runner", "forgejo-runner"} {
		t.Run(exe, func(t *testing.T) {
			t.Parallel()
			dir, bin := t.TempDir(), t.TempDir()
			child := startAncestor(t, filepath.Join(bin, exe), dir)
			assert.Contains(t, ciState([]string{"GITHUB_ACTIONS=true"}, "/usr/bin/agentrun", child), filepath.Join(dir, ".runner"))
			assert.Empty(t, ciState([]string{"GITHUB_ACTIONS=false"}, "/usr/bin/agentrun", child))
		})
	}
}

// startAncestor starts a copy of /bin/sh as exe, in folder dir, with a child, and
// returns the child's pid.
func startAncestor(t *testing.T, exe, dir string) int {
	t.Helper()
	sh, err := os.ReadFile("/bin/sh")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(exe), 0o755))
	testbuild.WriteExecutable(t, exe, sh)
	cmd := exec.Command(exe, "-c", "sleep 60 & echo $!; wait")
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	child, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	t.Cleanup(func() {
		if p, err := os.FindProcess(child); err == nil {
			_ = p.Kill()
		}
	})
	return child
}

func TestEntriesBut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"a.sh", "agentrun-bin/agentrun", "_runner_file_commands/set_env_1"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	assert.ElementsMatch(t, []string{filepath.Join(dir, "a.sh"), filepath.Join(dir, "_runner_file_commands")},
		entriesBut(dir, filepath.Join(dir, "agentrun-bin", "agentrun")))
	assert.Empty(t, entriesBut(filepath.Join(dir, "missing"), ""))
}

func TestParseParent(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		give string
		want int
	}{
		"plain":                      {"1234 (bash) S 1200 1234 1234 0 -1", 1200},
		"a name with spaces and ')'": {"99 (a) b) (c) R 7 99 99", 7},
		"no parent":                  {"1 (init) S 0 1 1", 0},
		"cut short":                  {"5 (x) S", -1},
		"no name":                    {"5 x S 4", -1},
		"not a number":               {"5 (x) S y", -1},
	} {
		t.Run(name, func(t *testing.T) { assert.Equal(t, c.want, parseParent([]byte(c.give))) })
	}
	assert.Equal(t, os.Getppid(), parentOf(os.Getpid()))
}

// FuzzParseParent: the parent read is a number of the stat's, or -1.
func FuzzParseParent(f *testing.F) {
	f.Add([]byte("1234 (bash) S 1200 1234"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzguard.Run(len(b), func() {
			if p := parseParent(b); p != -1 {
				assert.GreaterOrEqual(t, p, 0)
				assert.Contains(t, string(b), strconv.Itoa(p))
			}
		})
	})
}

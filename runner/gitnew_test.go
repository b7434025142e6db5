package runner_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
)

// TestNewGitFolderRunsNothing: the tools make repositories of their own in a workspace
// that had none (git init in a copy, which the user inspects, or in a shared folder, the
// user's), at its top and in a folder inside, and plant there what git runs: an
// fsmonitor hook, a hook, an alias that is a shell command, an include of a config of
// theirs. After the run the user's git there must run none of it. What a repository
// made for work has (its name and email, a remote, a branch, its commits) stays, and
// is no violation.
func TestNewGitFolderRunsNothing(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"copy", "shared"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
				ws, marks := filepath.Join(dir, "ws"), filepath.Join(dir, "marks")
				for _, d := range []string{ws, marks} {
					require.NoError(t, os.Mkdir(d, 0o755))
				}
				plant := func(repo, mark string) string {
					return fmt.Sprintf("git -C %[1]s init -q && git -C %[1]s config core.fsmonitor 'touch %[2]s/%[3]s-fsmonitor; false' && "+
						"git -C %[1]s config alias.st '!touch %[2]s/%[3]s-alias' && "+
						"printf '[alias]\\n\\tinc = !touch %[2]s/%[3]s-include\\n' > %[1]s/.git/more && git -C %[1]s config include.path more && "+
						"printf '#!/bin/sh\\ntouch %[2]s/%[3]s-hook\\n' > %[1]s/.git/hooks/post-checkout && chmod +x %[1]s/.git/hooks/post-checkout && "+
						"printf '#!/bin/sh\\ntouch %[2]s/%[3]s-commit\\n' > %[1]s/.git/hooks/pre-commit && chmod +x %[1]s/.git/hooks/pre-commit && echo planted-%[3]s; ", repo, marks, mark)
				}
				cmd := plant(".", "top") + "mkdir -p sub && " + plant("sub", "sub") +
					"mkdir work && git -C work init -q && git -C work config user.name a && git -C work config user.email a@example.com && " +
					"git -C work remote add origin https://example.com/x.git && echo x > work/x && git -C work add x && git -C work -c core.hooksPath=/dev/null commit -qm first && echo work-ok"
				_, out, output := runBash(t, dir, fmt.Sprintf("sandbox: {level: %s}, workspace: {dir: %q, mode: %s}", level, ws, mode), cmd+"; echo done")
				for _, want := range []string{"planted-top", "planted-sub", "work-ok"} {
					require.Contains(t, output, want, "the tools planted nothing: the test proves nothing\n%s", output)
				}
				inspect := ws
				if mode == "copy" {
					inspect = filepath.Join(out, runner.WorkspacesDir, "agent")
				}
				// The user's git there: status, two aliases, a commit and a checkout.
				for _, repo := range []string{inspect, filepath.Join(inspect, "sub")} {
					tryUserGit(t, repo, "status")
					tryUserGit(t, repo, "st")
					tryUserGit(t, repo, "inc")
					tryUserGit(t, repo, "-c", "user.name=u", "-c", "user.email=u@example.com", "commit", "-q", "--allow-empty", "-m", "mine")
					tryUserGit(t, repo, "checkout", "-q", "-b", "other")
				}
				entries, err := os.ReadDir(marks)
				require.NoError(t, err)
				for _, e := range entries {
					assert.Fail(t, "ESCAPE: the user's git ran the session's "+e.Name())
				}
				work := filepath.Join(inspect, "work")
				assert.Equal(t, "first", strings.TrimSpace(git(t, work, "log", "-1", "--format=%s")))
				assert.Equal(t, "a@example.com", strings.TrimSpace(git(t, work, "config", "--local", "user.email")))
				assert.Equal(t, "https://example.com/x.git", strings.TrimSpace(git(t, work, "remote", "get-url", "origin")))
				var targets []string
				for _, m := range readEvents(t, filepath.Join(out, runner.SessionsDir, "agent", runner.EventsFile), true) {
					if m.Kind == protocol.KindSandboxViolation {
						targets = append(targets, m.Violation.Target)
					}
				}
				assert.NotEmpty(t, targets)
				for _, target := range targets {
					assert.NotContains(t, target, "work", "a repository made for work is no violation")
				}
			})
		})
	}
}

// tryUserGit runs git in repo as userGit does, but it may fail: an alias the guard
// took out is no command.
func tryUserGit(t *testing.T, repo string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1")
	_ = cmd.Run()
}

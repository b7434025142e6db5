package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
)

// TestGitFolderIsGuarded lets a session's tools leave, in the git folder of the
// checkout they work in (a shared workspace, the user's own; a copy, which the user
// inspects; a writable path), a program for the git of whoever works there next: the user, or CI's
// next step, unconfined and with the job's secrets. The git folder is not in any diff
// the user reviews. After the run the user's git (git status, git checkout) must run
// none of it, the tools' commit must stay, and each thing put back must be a
// sandbox_violation event. A git folder the tools made a link cannot be put back: the
// session ends error_sandbox, so that CI's next step does not run.
func TestGitFolderIsGuarded(t *testing.T) {
	t.Parallel()
	hook := `printf '#!/bin/sh\ntouch {MARK}\n'`
	for _, c := range []struct {
		name, cmd string
		restored  []string // the violations' targets
		refused   bool
	}{
		{name: "an fsmonitor hook in the config", cmd: `git config core.fsmonitor 'touch {MARK}'`, restored: []string{".git/config"}},
		{name: "a hook", cmd: hook + ` > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout`,
			restored: []string{".git/hooks/post-checkout"}},
		{name: "the hooks folder a link", cmd: `mkdir -p .cache/h && ` + hook + ` > .cache/h/post-checkout && chmod +x .cache/h/post-checkout && ` +
			`mv .git/hooks .cache/old-hooks && ln -s ../.cache/h .git/hooks`, restored: []string{".git/hooks"}},
		{name: "another common folder", cmd: `mkdir -p .cache && cp -a .git .cache/evil && git config --file .cache/evil/config core.fsmonitor 'touch {MARK}' && ` +
			`echo ../.cache/evil > .git/commondir`, restored: []string{".git/commondir"}},
		{name: "a new git folder", cmd: `cp -a .git .git-new && git --git-dir=.git-new config core.fsmonitor 'touch {MARK}' && ` +
			`rm -rf .git && mv .git-new .git`, restored: []string{".git/config"}},
		{name: "a commit, nothing else", cmd: `git -c user.name=a -c user.email=a@example.com commit -q --allow-empty -m by-the-session`},
		{name: "the git folder a link", cmd: `mv .git .git-real && git --git-dir=.git-real config core.fsmonitor 'touch {MARK}' && ln -s .git-real .git`,
			refused: true},
	} {
		// A writable path: the workspace is a copy of another folder, and the repository
		// is one the tools may write besides it.
		for _, mode := range []string{"shared", "copy", "writable"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
					repo, out, mark := filepath.Join(dir, "repo"), filepath.Join(dir, "out"), filepath.Join(dir, "mark")
					require.NoError(t, os.MkdirAll(repo, 0o755))
					git(t, repo, "init", "-q")
					require.NoError(t, os.WriteFile(filepath.Join(repo, "hello.txt"), []byte("hello\n"), 0o644))
					git(t, repo, "add", "-A")
					git(t, repo, "commit", "-q", "-m", "start")
					cmd := strings.ReplaceAll(c.cmd, "{MARK}", mark) + " && echo done"
					specDir, sandboxSpec, wsMode := repo, fmt.Sprintf("{level: %s}", level), mode
					if mode == "writable" {
						specDir, sandboxSpec, wsMode = filepath.Join(dir, "work"), fmt.Sprintf("{level: %s, writable: [%q]}", level, repo), "copy"
						require.NoError(t, os.MkdirAll(specDir, 0o755))
						cmd = "cd " + repo + " && " + cmd
					}
					scripts := scriptsWith(t, "tamper", fmt.Sprintf("steps:\n  - tool_calls: [{name: Bash, input: {command: %q}}]\n  - text: \"Done.\"\n", cmd))
					spec := fmt.Sprintf("version: 1\ndefaults: {tools: [Bash], bash_mode: \"0667\", env: {PATH: /usr/bin:/bin}, "+
						"sandbox: %s, workspace: {dir: ., mode: %s}}\njobs:\n  - {id: tamper, model: tamper, prompt: Tamper.}\n", sandboxSpec, wsMode)
					sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
						Run(context.Background(), writeSpec(t, specDir, spec))
					require.NoError(t, err)
					require.Len(t, sum.Sessions, 1)
					results := toolResults(t, out, "tamper")
					require.Len(t, results, 1)
					require.Contains(t, results[0].Content, "done", "the tool did not do it")

					ws := repo
					if mode == "copy" {
						ws = filepath.Join(out, runner.WorkspacesDir, "tamper")
					}
					var res protocol.Result
					readJSON(t, filepath.Join(out, runner.SessionsDir, "tamper", runner.ResultFile), &res)
					if c.refused {
						assert.Equal(t, protocol.StatusSandbox, sum.Sessions[0].Status)
						require.NotNil(t, res.Error)
						assert.Contains(t, res.Error.Message, filepath.Join(ws, ".git"))
						return
					}
					assert.Equal(t, protocol.StatusSuccess, sum.Sessions[0].Status, "%+v", res.Error)
					// What the user, or CI's next step, does next.
					userGit(t, ws, "status")
					userGit(t, ws, "checkout", "-q", "-b", "after-the-session")
					assert.NoFileExists(t, mark, "ESCAPE: the user's git ran the session's program")
					var targets []string
					for _, m := range readEvents(t, filepath.Join(out, runner.SessionsDir, "tamper", runner.EventsFile), true) {
						if m.Kind == protocol.KindSandboxViolation && m.Violation.Kind == "git_folder" {
							targets = append(targets, m.Violation.Target)
						}
					}
					want := c.restored
					if mode == "writable" {
						// Not the workspace's: named in full.
						want = nil
						for _, r := range c.restored {
							want = append(want, filepath.Join(repo, r))
						}
					}
					assert.ElementsMatch(t, want, targets)
					if c.restored == nil {
						assert.Contains(t, userGit(t, ws, "log", "-1", "--format=%s"), "by-the-session", "the session's commit is undone")
					}
				})
			})
		}
	}
}

// userGit runs git in dir as the user would after the run: unconfined, with a home of
// its own.
func userGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// TestGitFolderGuardMasksSecrets: a name the tools give a file in the git folder may
// hold a secret of the session's; what the guard puts back is told with it masked, in
// the log and in the streams, and the file goes.
func TestGitFolderGuardMasksSecrets(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		repo, out := filepath.Join(dir, "repo"), filepath.Join(dir, "out")
		require.NoError(t, os.MkdirAll(repo, 0o755))
		git(t, repo, "init", "-q")
		token := "guard-token-" + filepath.Base(dir)
		scripts := scriptsWith(t, "tamper", "steps:\n  - tool_calls: [{name: Bash, input: {command: \"touch .git/hooks/$GUARD_TOKEN && echo done\"}}]\n  - text: \"Done.\"\n")
		spec := fmt.Sprintf("version: 1\ndefaults: {tools: [Bash], bash_mode: \"0667\", secrets: [GUARD_TOKEN], env: {PATH: /usr/bin:/bin, GUARD_TOKEN: \"${GUARD_TOKEN:-%s}\"}, "+
			"sandbox: {level: %s}, workspace: {dir: ., mode: shared}}\njobs:\n  - {id: tamper, model: tamper, prompt: Tamper.}\n", token, level)
		core, logs := observer.New(zapcore.DebugLevel)
		_, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Log: zap.New(core),
			Environ: append(os.Environ(), "GUARD_TOKEN="+token), LookupEnv: func(k string) (string, bool) {
				if k == "GUARD_TOKEN" {
					return token, true
				}
				return os.LookupEnv(k)
			}}).Run(context.Background(), writeSpec(t, repo, spec))
		require.NoError(t, err)
		require.Contains(t, toolResults(t, out, "tamper")[0].Content, "done")
		assert.NoFileExists(t, filepath.Join(repo, ".git", "hooks", token))
		put := logs.FilterMessageSnippet("agentrun put it back").All()
		require.Len(t, put, 1)
		assert.NotContains(t, fmt.Sprint(put[0].ContextMap()), token, "LEAK in the log")
		var targets []string
		for _, m := range readEvents(t, filepath.Join(out, runner.SessionsDir, "tamper", runner.EventsFile), true) {
			if m.Kind == protocol.KindSandboxViolation {
				targets = append(targets, m.Violation.Target)
			}
		}
		require.Len(t, targets, 1)
		assert.NotContains(t, targets[0], token, "LEAK in the streams")
	})
}

// TestChecksSeeTheGitFolderAsItWas: a job's checks judge the workspace with git, and a
// session could make git lie to them through its git folder: an entry in
// .git/info/exclude (or status.showUntrackedFiles=no in the config) keeps the file it
// left from git status. The checks must see the git folder as it was before the
// session, and catch the stray file.
func TestChecksSeeTheGitFolderAsItWas(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		mode, cmd string
		replaced  bool // the git folder is replaced by a file: the session ends error_sandbox
	}{
		"an exclude":                     {"copy", "echo stray.txt >> .git/info/exclude", false},
		"a status setting":               {"copy", "git config status.showUntrackedFiles no", false},
		"an exclude in a worktree":       {"worktree", "echo stray.txt >> .git/info/exclude", false},
		"a status setting in a worktree": {"worktree", "git config status.showUntrackedFiles no", false},
		// The tools can replace the worktree's git folder by a .git file that names a
		// repository of their own, where all is committed. The guard cannot put a git
		// folder back where a file or a link took its place: the run fails.
		"a git file that names another repository": {"worktree", "rm -rf .git && mkdir .cache && git init -q --separate-git-dir=$PWD/.cache/g . && " +
			"echo .cache >> .cache/g/info/exclude && git add -A && git -c user.name=a -c user.email=a@example.com commit -qm fake", true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
				repo, out := filepath.Join(dir, "repo"), filepath.Join(dir, "out")
				require.NoError(t, os.MkdirAll(repo, 0o755))
				git(t, repo, "init", "-q")
				require.NoError(t, os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("/jobs.yaml\n/out/\n"), 0o644))
				git(t, repo, "add", "-A")
				git(t, repo, "commit", "-q", "-m", "start")
				scripts := scriptsWith(t, "stray", fmt.Sprintf("steps:\n  - tool_calls: [{name: Bash, input: {command: %q}}]\n  - text: \"Done.\"\n",
					"echo left > stray.txt && "+c.cmd+" && git status --porcelain && echo done"))
				spec := fmt.Sprintf("version: 1\ndefaults: {tools: [Bash], bash_mode: \"0467\", env: {PATH: /usr/bin:/bin}, "+
					"sandbox: {level: %s, readable: [%q]}, workspace: {dir: ., mode: %s}}\njobs:\n  - id: stray\n    model: stray\n    prompt: Leave a file.\n"+
					"    checks: [{name: clean, run: 's=$(git status --porcelain) && test -z \"$s\"'}]\n", level, repo, c.mode)
				sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
					Run(context.Background(), writeSpec(t, repo, spec))
				require.NoError(t, err)
				results := toolResults(t, out, "stray")
				require.Len(t, results, 1)
				require.Contains(t, results[0].Content, "done")
				require.NotContains(t, results[0].Content, "stray.txt", "the tools' own git no longer sees the file")
				var res protocol.Result
				readJSON(t, filepath.Join(out, runner.SessionsDir, "stray", runner.ResultFile), &res)
				if c.replaced {
					assert.Equal(t, protocol.StatusSandbox, sum.Sessions[0].Status, "the check was fooled: %+v", res.Checks)
					return
				}
				require.Len(t, res.Checks, 1)
				assert.False(t, res.Checks[0].Passed, "the check was fooled: %+v", res.Checks[0])
				assert.Equal(t, protocol.StatusChecks, sum.Sessions[0].Status)
			})
		})
	}
}

package runner_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
)

// checkout is a repository as CI leaves it for the steps after its checkout: the
// forge's token in its git config (actions/checkout before v6 as an extra HTTP header,
// GitLab CI and others in the remote's URL) and, as actions/checkout v6 does, in a file
// of the runner's temporary folder that the config includes.
type checkout struct {
	repo, include string
	tokens        []string
}

func newCheckout(t *testing.T, dir string) checkout {
	t.Helper()
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	c := checkout{repo: filepath.Join(dir, "repo"), include: filepath.Join(dir, "runner-temp", "git-credentials-"+stamp+".config"),
		tokens: []string{"ghs_header" + stamp, "glcbt_url" + stamp, "ghs_included" + stamp, "ya29.gcloud" + stamp, "ghs_nested" + stamp}}
	require.NoError(t, os.MkdirAll(c.repo, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(c.include), 0o755))
	git(t, c.repo, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(c.repo, "hello.txt"), []byte("hello world\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(c.repo, "jobs.yaml"), nil, 0o644))
	git(t, c.repo, "add", "-A")
	git(t, c.repo, "commit", "-q", "-m", "the checked-out commit")
	basic := func(token string) string {
		return "AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	}
	git(t, c.repo, "config", "http.https://github.com/.extraheader", basic(c.tokens[0]))
	git(t, c.repo, "config", "remote.origin.url", "https://gitlab-ci-token:"+c.tokens[1]+"@gitlab.example.com/group/project.git")
	git(t, c.repo, "config", "includeIf.gitdir:"+c.repo+"/.git.path", c.include)
	git(t, c.repo, "config", "core.abbrev", "9") // a setting the tools' git must still read
	require.NoError(t, os.WriteFile(c.include, []byte("[http \"https://github.com/\"]\n\textraheader = "+basic(c.tokens[2])+"\n"), 0o600))
	// A second repository checked out inside the first (actions/checkout's path:),
	// with its token, as CI's checkout of a private tools repository leaves it.
	nested := filepath.Join(c.repo, "ci", "tools")
	require.NoError(t, os.MkdirAll(nested, 0o755))
	git(t, nested, "init", "-q")
	git(t, nested, "config", "http.https://github.com/.extraheader", basic(c.tokens[4]))
	// google-github-actions/auth writes its credentials into the workspace, untracked.
	require.NoError(t, os.WriteFile(filepath.Join(c.repo, "gha-creds-"+stamp+".json"),
		[]byte(`{"type": "external_account", "credential_source": {"headers": {"Authorization": "Bearer `+c.tokens[3]+`"}}}`), 0o600))
	return c
}

// leaked are the checkout's tokens in b, raw or in the header's base64.
func (c checkout) leaked(b string) []string {
	var out []string
	for _, tok := range c.tokens {
		enc := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok))
		if strings.Contains(b, tok) || strings.Contains(b, enc[4:len(enc)-4]) {
			out = append(out, tok)
		}
	}
	return out
}

// TestCheckoutCredentials runs a session whose tools read the git config of a checkout
// that CI left with its forge token (a header, a URL and an included file), where the
// tools may read that file: the token would let the model push to the repository, and
// it would reach the provider and the artifacts. No token may reach the tools or the
// artifacts in any workspace mode. A copy and a worktree come without them, and their
// git still works with the config's other settings; a shared workspace, whose config
// the tools' git must read, ends error_sandbox before any tool runs, saying what to do.
// The user's checkout keeps its credentials for the steps after agentrun.
func TestCheckoutCredentials(t *testing.T) {
	t.Parallel()
	read := `cat .git/config \"$(git rev-parse --git-common-dir)/config\" {REPO}/.git/config gha-*.json {REPO}/gha-*.json ` +
		`ci/tools/.git/config {REPO}/ci/tools/.git/config; ` +
		`for f in {TEMP}/*; do cat \"$f\"; done; git config --list --show-origin; ` +
		`git remote -v; git log -1 --format=%s%n%h; echo read`
	for _, mode := range []string{"copy", "worktree", "shared"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
				c := newCheckout(t, dir)
				out := filepath.Join(dir, "out")
				if mode == "copy" {
					out = filepath.Join(c.repo, "agentrun-out") // the action's default: in the checkout
				}
				// The bash policy would refuse a file named credentials.
				cmd := strings.NewReplacer("{TEMP}", filepath.Dir(c.include), "{REPO}", c.repo).Replace(read)
				scripts := scriptsWith(t, "peek", "steps:\n  - tool_calls: [{name: Bash, input: {command: \""+cmd+"\"}}]\n  - text: \"Peeked.\"\n")
				// What CI's checkout is to the tools: readable (external read), as the
				// runner's temporary folder is; a copy's tools can read the checkout
				// it was copied from.
				readable := filepath.Dir(c.include)
				if mode != "shared" {
					readable += ", " + c.repo
				}
				spec := fmt.Sprintf("version: 1\ndefaults: {tools: [Bash], bash_mode: \"0467\", env: {PATH: /usr/bin:/bin}, "+
					"sandbox: {level: %s, readable: [%s]}, workspace: {dir: ., mode: %s}}\njobs:\n  - {id: peek, model: peek, prompt: Peek.}\n",
					level, readable, mode)
				sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
					Run(context.Background(), writeSpec(t, c.repo, spec))
				require.NoError(t, err)
				require.Len(t, sum.Sessions, 1)
				results := toolResults(t, out, "peek")
				if mode == "shared" {
					// The tools would see the checkout's own config, which no sandbox
					// can take from them without taking the repository from git: the
					// session ends before any tool runs, saying why and what to do.
					assert.Equal(t, protocol.StatusSandbox, sum.Sessions[0].Status)
					assert.Empty(t, results)
					var res protocol.Result
					readJSON(t, filepath.Join(out, runner.SessionsDir, "peek", runner.ResultFile), &res)
					require.NotNil(t, res.Error)
					assert.Contains(t, res.Error.Message, "persist-credentials: false")
					assert.Contains(t, res.Error.Message, "http.https://github.com/.extraheader")
					assert.Contains(t, res.Error.Message, "remote.origin.url")
				} else {
					require.Len(t, results, 1)
					assert.Empty(t, c.leaked(results[0].Content), "LEAK: %s", results[0].Content)
					assert.Contains(t, results[0].Content, "the checked-out commit", "the tools' git no longer reads the repository")
					assert.Contains(t, results[0].Content, "read")
					assert.Contains(t, results[0].Content, "https://gitlab.example.com/group/project.git", "the remote is gone")
					assert.Contains(t, results[0].Content, "core.abbrev=9", "the config's other settings are gone")
				}
				for _, p := range artifactFiles(t, out) {
					b, err := os.ReadFile(p)
					require.NoError(t, err)
					assert.Empty(t, c.leaked(string(b)), "LEAK in %s", p)
				}
				// The user's checkout is the user's: its steps after agentrun push with it.
				cfg := readFile(t, filepath.Join(c.repo, ".git", "config"))
				gha, err := filepath.Glob(filepath.Join(c.repo, "gha-creds-*.json"))
				require.NoError(t, err)
				require.Len(t, gha, 1)
				nested := readFile(t, filepath.Join(c.repo, "ci", "tools", ".git", "config"))
				assert.Len(t, c.leaked(cfg+readFile(t, c.include)+readFile(t, gha[0])+nested), 5, "agentrun changed the checkout's credentials")
			})
		})
	}
}

// artifactFiles are the regular files under out.
func artifactFiles(t *testing.T, out string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	}))
	return files
}

// TestUserGitConfigCredentials runs a session in a clean repository where the user's
// global git config holds a token, as CI writes one for private modules (a URL that
// takes the place of the forge's), and the tools may read the home: no token may reach
// them, and their git still reads the repository, commits in the user's name and has
// the config's other settings.
func TestUserGitConfigCredentials(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
		token := "ghp_global" + stamp
		// A home where homes are, in the external scope: the tools' /tmp is their own.
		home := userHomeDir(t)
		repo, out := filepath.Join(dir, "repo"), filepath.Join(dir, "out")
		require.NoError(t, os.MkdirAll(repo, 0o755))
		git(t, repo, "init", "-q")
		require.NoError(t, os.WriteFile(filepath.Join(repo, "jobs.yaml"), nil, 0o644))
		git(t, repo, "add", "-A")
		git(t, repo, "commit", "-q", "-m", "a clean checkout")
		require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"),
			[]byte("[user]\n\tname = CI\n\temail = ci@example.com\n[url \"https://"+token+"@github.com/\"]\n\tinsteadOf = https://github.com/\n"+
				"[alias]\n\thi = !echo hello-from-the-alias\n[core]\n\tabbrev = 11\n"), 0o644))
		cmd := `cat ~/.gitconfig; git config --list --show-origin; git log -1 --format=%s; git var GIT_COMMITTER_IDENT; ` +
			`git hi; echo abbrev=$(git config core.abbrev); echo read`
		scripts := scriptsWith(t, "peek", "steps:\n  - tool_calls: [{name: Bash, input: {command: \""+cmd+"\"}}]\n  - text: \"Peeked.\"\n")
		spec := fmt.Sprintf("version: 1\ndefaults: {tools: [Bash], bash_mode: \"0467\", env: {PATH: /usr/bin:/bin}, "+
			"sandbox: {level: %s}}\njobs:\n  - {id: peek, model: peek, prompt: Peek.}\n", level)
		environ := append(os.Environ(), "HOME="+home)
		_, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: environ, Home: home}).
			Run(context.Background(), writeSpec(t, repo, spec))
		require.NoError(t, err)
		results := toolResults(t, out, "peek")
		require.Len(t, results, 1)
		assert.NotContains(t, results[0].Content, token, "LEAK")
		assert.Contains(t, results[0].Content, "a clean checkout", "the tools' git no longer reads the repository")
		assert.Contains(t, results[0].Content, "CI <ci@example.com>", "the tools' commits lost the user's name")
		assert.Contains(t, results[0].Content, "hello-from-the-alias", "the tools' git lost the user's aliases")
		assert.Contains(t, results[0].Content, "abbrev=11", "the tools' git lost the user's settings")
		for _, p := range artifactFiles(t, out) {
			assert.NotContains(t, readFile(t, p), token, "LEAK in %s", p)
		}
	})
}

// userHomeDir is a new folder in the user's home directory, removed when t ends.
func userHomeDir(t *testing.T) string {
	t.Helper()
	real, err := os.UserHomeDir()
	require.NoError(t, err)
	home, err := os.MkdirTemp(real, ".agentrun-test-home-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(home) })
	return home
}

// TestCheckoutScanSkipsTheOutputFolder runs a copy session in a checkout that holds
// its output folder, where an earlier run left a copy of a repository with a token in
// its config: the scan does not look into the output folder, which the copy leaves
// out, and the session runs.
func TestCheckoutScanSkipsTheOutputFolder(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		repo := filepath.Join(dir, "repo")
		require.NoError(t, os.MkdirAll(repo, 0o755))
		git(t, repo, "init", "-q")
		out := filepath.Join(repo, "agentrun-out")
		stale := filepath.Join(out, runner.WorkspacesDir, "old")
		require.NoError(t, os.MkdirAll(stale, 0o755))
		git(t, stale, "init", "-q")
		git(t, stale, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c3RhbGU=")
		scripts := scriptsWith(t, "peek", "steps:\n  - tool_calls: [{name: Bash, input: {command: \"echo ran\"}}]\n  - text: \"Done.\"\n")
		spec := fmt.Sprintf("version: 1\ndefaults: {tools: [Bash], bash_mode: \"0467\", env: {PATH: /usr/bin:/bin}, "+
			"sandbox: {level: %s}}\njobs:\n  - {id: peek, model: peek, prompt: Peek.}\n", level)
		sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
			Run(context.Background(), writeSpec(t, repo, spec))
		require.NoError(t, err)
		require.Len(t, sum.Sessions, 1)
		assert.Equal(t, protocol.StatusSuccess, sum.Sessions[0].Status)
		results := toolResults(t, out, "peek")
		require.Len(t, results, 1)
		assert.Contains(t, results[0].Content, "ran")
	})
}

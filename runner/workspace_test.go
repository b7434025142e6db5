package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/transport/scripted"
	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
)

// workspaceSpec runs the workspace script twice in mode.
func workspaceSpec(mode string) string {
	return `version: 1
concurrency: 2
defaults: {tools: [Edit, Write], workspace: {mode: ` + mode + `}}
jobs:
  - {id: ws, model: workspace, repeat: 2, prompt: Change the workspace.}
`
}

// runWorkspace runs spec and checks that every session succeeded with no failed tool.
func runWorkspace(t *testing.T, specDir, out string, mode string) *runner.Summary {
	t.Helper()
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t))}).
		Run(context.Background(), writeSpec(t, specDir, workspaceSpec(mode)))
	require.NoError(t, err)
	verifyOut(t, out, sum)
	for _, row := range sum.Sessions {
		assert.Equal(t, protocol.StatusSuccess, row.Status, "%s: %+v", row.Key, row.Error)
		for _, r := range toolResults(t, out, row.Key) {
			assert.False(t, r.IsError, "%s: %s", row.Key, r.Content)
		}
	}
	return sum
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestWorkspaceShared(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello world\n"), 0o644))
	out := filepath.Join(t.TempDir(), "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t))}).
		Run(context.Background(), writeSpec(t, dir, `version: 1
defaults: {tools: [Edit, Write], workspace: {mode: shared}}
jobs:
  - {id: ws, model: workspace, prompt: Change the workspace.}
`))
	require.NoError(t, err)
	verifyOut(t, out, sum)
	assert.Equal(t, 0, sum.ExitCode(false))
	assert.NoDirExists(t, filepath.Join(out, runner.WorkspacesDir), "a shared session has no workspace of its own")
	assert.Equal(t, "bye world\n", readFile(t, filepath.Join(dir, "hello.txt")), "a shared session works in the spec's folder")
	assert.Equal(t, "new\n", readFile(t, filepath.Join(dir, "new.txt")))
}

func TestWorkspaceCopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello world\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "keep.txt"), []byte("kept\n"), 0o600))
	require.NoError(t, os.Symlink("hello.txt", filepath.Join(dir, "link")))
	out := filepath.Join(dir, "out") // inside the workspace: the copies must skip it
	sum := runWorkspace(t, dir, out, "copy")

	assert.Equal(t, "hello world\n", readFile(t, filepath.Join(dir, "hello.txt")), "the original is untouched")
	assert.NoFileExists(t, filepath.Join(dir, "new.txt"))
	require.Len(t, sum.Sessions, 2)
	for _, row := range sum.Sessions {
		ws := filepath.Join(out, runner.WorkspacesDir, row.Key)
		assert.Equal(t, "bye world\n", readFile(t, filepath.Join(ws, "hello.txt")), "%s edits its own fresh copy", row.Key)
		assert.Equal(t, "new\n", readFile(t, filepath.Join(ws, "new.txt")))
		assert.Equal(t, "kept\n", readFile(t, filepath.Join(ws, "sub", "keep.txt")))
		info, err := os.Stat(filepath.Join(ws, "sub", "keep.txt"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "modes are kept")
		link, err := os.Readlink(filepath.Join(ws, "link"))
		require.NoError(t, err)
		assert.Equal(t, "hello.txt", link, "symlinks stay symlinks")
		assert.NoDirExists(t, filepath.Join(ws, "out"), "the output folder is not copied")
	}
}

// git runs git in dir with a fixed identity.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=agentrun", "-c", "user.email=agentrun@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// newRepo is a git repository with one commit of hello.txt and the files of more.
func newRepo(t *testing.T, more map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello world\n"), 0o644))
	for name, content := range more {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "start")
	return dir
}

func TestWorkspaceWorktree(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"jobs.yaml": workspaceSpec("worktree")})
	out := filepath.Join(t.TempDir(), "out")
	sum := runWorkspace(t, dir, out, "worktree")

	require.Len(t, sum.Sessions, 2)
	for _, row := range sum.Sessions {
		patch := readFile(t, filepath.Join(out, runner.SessionsDir, row.Key, runner.PatchFile))
		assert.Contains(t, patch, "-hello world", row.Key)
		assert.Contains(t, patch, "+bye world", row.Key)
		assert.Contains(t, patch, "b/new.txt", row.Key)
		assert.NoDirExists(t, filepath.Join(out, runner.WorkspacesDir, row.Key), "%s: the worktree is removed", row.Key)
	}
	assert.Equal(t, "hello world\n", readFile(t, filepath.Join(dir, "hello.txt")), "the repository is untouched")
	assert.Empty(t, git(t, dir, "status", "--porcelain"))
	assert.Equal(t, 1, strings.Count(git(t, dir, "worktree", "list", "--porcelain"), "worktree "), "only the main worktree is left")
}

// TestWorkspaceRefusedBeforeAnyStart checks that Run starts nothing when a session's
// workspace cannot be made: a missing folder, or a worktree of a folder that is no git
// repository or has no commit. The error is the spec's, with the place.
func TestWorkspaceRefusedBeforeAnyStart(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tests := map[string]struct {
		workspace string
		setup     func(t *testing.T, dir string)
		want      string
	}{
		"missing folder": {workspace: "{dir: missing}", want: "jobs[0].workspace.dir: workspace "},
		"worktree of a plain folder": {
			workspace: "{mode: worktree}", want: "is not a git repository",
		},
		"worktree of a repository without a commit": {
			workspace: "{mode: worktree}", setup: func(t *testing.T, dir string) { git(t, dir, "init", "-q") },
			want: "has no commit at HEAD yet",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			out := filepath.Join(t.TempDir(), "out")
			spec := writeSpec(t, dir, "version: 1\njobs:\n  - {id: ws, model: workspace, prompt: Change it., workspace: "+tt.workspace+"}\n")
			_, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t))}).Run(context.Background(), spec)
			var se *jobs.SpecError
			require.ErrorAs(t, err, &se)
			assert.Contains(t, err.Error(), tt.want)
			assert.NoDirExists(t, out)
		})
	}
}

// gitEscapeScript points the worktree's .git at a repository of the session's own,
// whose config has a clean filter for every file and an fsmonitor hook, and makes a
// nested repository configured alike; each marks its runs in a file beside the
// workspaces folder: outside the session's workspace,
// where its tools cannot write. The runner's git add, which saves the session's
// changes, must not run it.
const gitEscapeScript = `steps:
  - tool_calls:
      - name: Write
        input: {path: .git/commondir, content: "../fake\n"}
      - name: Write
        input: {path: .git/config, content: "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch ../../escaped-fsmonitor.txt; false\"\n[filter \"x\"]\n\tclean = \"touch ../../escaped.txt; cat\"\n"}
      - name: Write
        input: {path: fake/HEAD, content: "ref: refs/heads/main\n"}
      - name: Write
        input: {path: fake/config, content: "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch ../../escaped-fsmonitor.txt; false\"\n[filter \"x\"]\n\tclean = \"touch ../../escaped.txt; cat\"\n"}
      - name: Write
        input: {path: fake/objects/keep, content: ""}
      - name: Write
        input: {path: fake/refs/heads/keep, content: ""}
      - name: Write
        input: {path: .gitattributes, content: "* filter=x\n"}
      - name: Write
        input: {path: sub/.git/HEAD, content: "ref: refs/heads/main\n"}
      - name: Write
        input: {path: sub/.git/config, content: "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch ../../../escaped-nested.txt; false\"\n[filter \"x\"]\n\tclean = \"touch ../../../escaped-nested.txt; cat\"\n"}
      - name: Write
        input: {path: sub/.git/objects/keep, content: ""}
      - name: Write
        input: {path: sub/.git/refs/heads/keep, content: ""}
      - name: Write
        input: {path: sub/file.txt, content: "nested\n"}
  - text: "Done."
`

// runOneWorktree runs one session, ws, of the script model in a worktree of the
// repository dir, with the Write tool, requires that every Write succeeded, and
// returns the run's output folder.
func runOneWorktree(t *testing.T, dir string, scripts map[string]*scripted.Script, model string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts)}).
		Run(context.Background(), writeSpec(t, dir, "version: 1\ndefaults: {tools: [Write], workspace: {mode: worktree}}\njobs:\n  - {id: ws, model: "+model+", prompt: Change it.}\n"))
	require.NoError(t, err)
	require.Len(t, sum.Sessions, 1)
	for _, r := range toolResults(t, out, "ws") {
		require.False(t, r.IsError, "a Write failed, so the test proves nothing: %s", r.Content)
	}
	return out
}

// toolResults are the tool results in the stream.jsonl of session key of the run
// whose output folder is out.
func toolResults(t *testing.T, out, key string) []protocol.ToolResult {
	t.Helper()
	var results []protocol.ToolResult
	for _, m := range readEvents(t, filepath.Join(out, runner.SessionsDir, key, runner.StreamFile), false) {
		if m.Kind == protocol.KindToolResult {
			results = append(results, m.Result)
		}
	}
	return results
}

// TestWorktreeRunsNoConfigOfTheSession runs a worktree session that configures its
// worktree's git folder to run commands (a clean filter, an fsmonitor hook), and makes it
// name a repository of its own as its common folder, configured the same: the runner's
// git commands on the worktree, which run unconfined, must not run them.
func TestWorktreeRunsNoConfigOfTheSession(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, nil)
	scripts := scriptsWith(t, "gitescape", gitEscapeScript)
	out := runOneWorktree(t, dir, scripts, "gitescape")
	assert.NoFileExists(t, filepath.Join(out, "escaped.txt"), "ESCAPE: the runner's git ran the session's clean filter")
	assert.NoFileExists(t, filepath.Join(out, "escaped-fsmonitor.txt"), "ESCAPE: the runner's git ran the session's fsmonitor hook")
	assert.NoFileExists(t, filepath.Join(out, "escaped-nested.txt"), "ESCAPE: the runner's git ran a nested repository's config")
	patch := readFile(t, filepath.Join(out, runner.SessionsDir, "ws", runner.PatchFile))
	assert.Contains(t, patch, "b/fake/config", "the session's changes are saved all the same")
	assert.NoDirExists(t, filepath.Join(out, runner.WorkspacesDir, "ws"), "the worktree is removed")
	assert.Equal(t, 1, strings.Count(git(t, dir, "worktree", "list", "--porcelain"), "worktree "), "the repository forgot the worktree")
}

// TestToolsKeepTheOutputFolder: where the tools may write the folder that holds the
// run's output folder, they must not be able to move it, or a folder on its way, and
// leave a link to another in its place: the runner, unconfined, would write its reports
// and later sessions' files where the link led. Each case moves one folder aside (or a
// link the user made on the way) and links elsewhere in its place; nothing may land
// there.
func TestToolsKeepTheOutputFolder(t *testing.T) {
	t.Parallel()
	requireLevel(t, sandbox.LevelStrict)
	for _, tc := range []struct {
		name string
		out  string // the output folder, below the test's folder
		move string // the folder the tools move, below the folder they write
		// writable is the sandbox's writable folder, below the test's folder; empty
		// for a shared workspace, the test's folder.
		writable string
		link     string // where the first folder of out is a link to, in the test's folder
	}{
		{name: "workspace holds it", out: "out", move: "out"},
		{name: "a folder of the workspace holds it", out: "a/b/out", move: "a"},
		{name: "its parent in the workspace", out: "a/b/out", move: "a/b"},
		{name: "a writable folder holds it", out: "w/out", move: "out", writable: "w"},
		{name: "a folder of a writable folder holds it", out: "w/runs/out", move: "runs", writable: "w"},
		{name: "through a link in the workspace", out: "l/out", move: "l", link: "real"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			elsewhere := t.TempDir()
			writes := dir
			settings := "workspace: {mode: shared}, sandbox: {level: strict}"
			if tc.writable != "" {
				writes = filepath.Join(dir, tc.writable)
				settings = `sandbox: {level: strict, writable: ["` + writes + `"]}`
			}
			out, real := filepath.Join(dir, tc.out), filepath.Join(dir, tc.out) // real: out's links resolved
			if tc.link != "" {
				first, rest, _ := strings.Cut(tc.out, "/")
				require.NoError(t, os.Mkdir(filepath.Join(dir, tc.link), 0o755))
				require.NoError(t, os.Symlink(tc.link, filepath.Join(dir, first)))
				real = filepath.Join(dir, tc.link, rest)
			}
			require.NoError(t, os.MkdirAll(out, 0o755))
			var folders []string // on the way from the writable folder to the output folder
			for d := real; d != writes; d = filepath.Dir(d) {
				folders = append(folders, d)
			}
			scripts := scriptsWith(t, "swap", `steps:
  - tool_calls: [{name: Bash, input: {command: "cd `+writes+` && mv `+tc.move+` moved; ln -s `+elsewhere+` `+tc.move+`; ls -la"}}]
  - text: "Moved it."
`)
			sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
				Run(context.Background(), writeSpec(t, dir, "version: 1\ndefaults: {tools: [Bash], bash_mode: \"0707\", "+settings+"}\njobs:\n  - {id: ws, model: swap, prompt: Move it.}\n"))
			require.NoError(t, err)
			require.Len(t, sum.Sessions, 1)
			entries, err := os.ReadDir(elsewhere)
			require.NoError(t, err)
			assert.Empty(t, entries, "ESCAPE: the runner wrote into the folder the session's link named")
			assert.FileExists(t, filepath.Join(real, runner.SummaryFile), "the summary is where the run was told to write it")
			// mv may copy what it cannot rename (across the pins' mounts), but the
			// folders on the way stay folders. (A link the user made on the way the
			// tools may replace: the runner no longer follows it.)
			for _, d := range folders {
				fi, err := os.Lstat(d)
				if assert.NoError(t, err, "the tools removed %s", d) {
					assert.True(t, fi.IsDir(), "the tools replaced %s: %s", d, fi.Mode())
				}
			}
			t.Log(readFile(t, filepath.Join(real, runner.SessionsDir, "ws", runner.TranscriptFile)))
		})
	}
}

// TestWorktreeGitKeepsTheRunnersSecrets: the user's git config defines a clean filter
// and a diff text converter, as git-lfs and a PDF converter would be; the session's
// .gitattributes applies both to every file. When the runner's git saves the patch, a
// filter of the user's may run, but it must not get the runner's environment, which
// holds the API keys; and the patch is of the files as they are, not as a converter
// renders them (no converter runs).
func TestWorktreeGitKeepsTheRunnersSecrets(t *testing.T) {
	dir := newRepo(t, nil)
	marks := t.TempDir()
	config := filepath.Join(t.TempDir(), "gitconfig")
	// Not git-lfs's own filter name: where git-lfs is installed, the system config's
	// filter.lfs.process would take the place of this clean command.
	require.NoError(t, os.WriteFile(config, []byte(`[filter "large"]
	clean = "env > `+marks+`/clean-env.txt; cat"
[diff "pdf"]
	textconv = "env > `+marks+`/textconv-env.txt; tr a-z A-Z <"
`), 0o644))
	t.Setenv("GIT_CONFIG_GLOBAL", config)
	key := "sk-ant-api03-" + strings.Repeat("k", 20)
	t.Setenv("ANTHROPIC_API_KEY", key)
	scripts := scriptsWith(t, "attrs", `steps:
  - tool_calls:
      - {name: Write, input: {path: .gitattributes, content: "* filter=large diff=pdf\n"}}
      - {name: Write, input: {path: notes.txt, content: "lower case\n"}}
  - text: "Done."
`)
	out := runOneWorktree(t, dir, scripts, "attrs")
	entries, err := os.ReadDir(marks)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, readFile(t, filepath.Join(marks, e.Name())), key,
			"LEAK: a program the runner's git ran (%s) got the runner's API key", e.Name())
	}
	assert.NoFileExists(t, filepath.Join(marks, "textconv-env.txt"), "the runner's git ran a text converter for the patch")
	patch := readFile(t, filepath.Join(out, runner.SessionsDir, "ws", runner.PatchFile))
	assert.Contains(t, patch, "+lower case", "the patch holds the file as it is")
}

// TestRunnerGitIsTheOneFoundFirst: a folder on the runner's PATH before git's own
// (~/.local/bin on a CI machine) is writable by the tools. A session puts a program
// named git there; the runner's git, unconfined, must still be the git it found before
// any session ran, for the next session's worktree and patch as for the first's.
func TestRunnerGitIsTheOneFoundFirst(t *testing.T) {
	requireLevel(t, sandbox.LevelStrict)
	dir := newRepo(t, nil)
	bin := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	marker := filepath.Join(t.TempDir(), "escaped")
	scripts := scriptsWith(t, "plant", `steps:
  - tool_calls: [{name: Bash, input: {command: "printf '#!/bin/sh\\ntouch `+marker+`\\nexec /usr/bin/git \"$@\"\\n' > `+bin+`/git; chmod +x `+bin+`/git"}}]
  - text: "Planted."
`)
	out := filepath.Join(t.TempDir(), "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
		Run(context.Background(), writeSpec(t, dir, "version: 1\nconcurrency: 1\ndefaults: {tools: [Bash], workspace: {mode: worktree}, sandbox: {level: strict, writable: [\""+bin+"\"]}}\n"+
			"jobs:\n  - {id: plant, model: plant, prompt: Plant it., repeat: 2}\n"))
	require.NoError(t, err)
	require.Len(t, sum.Sessions, 2)
	require.FileExists(t, filepath.Join(bin, "git"), "the tool planted nothing: the test proves nothing")
	assert.NoFileExists(t, marker, "ESCAPE: the runner ran the git a session planted on its PATH")
	for _, row := range sum.Sessions {
		assert.Equal(t, protocol.StatusSuccess, row.Status, sum.Text())
	}
}

// TestSessionsCannotReadEachOthersWorkspaces: copy workspaces lie side by side in the
// output folder's workspaces/, which the tools can read where they can read the folder
// that holds it (an output folder in a readable home or checkout). One session's tools
// must not read another's workspace: in a batch evaluation they would find the other
// attempts' work.
func TestSessionsCannotReadEachOthersWorkspaces(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		ws := filepath.Join(dir, "ws")
		require.NoError(t, os.Mkdir(ws, 0o755))
		out := filepath.Join(dir, "out")
		scripts := scriptsWith(t, "peek", `steps:
  - tool_calls: [{name: Bash, input: {command: "od -An -N12 -tx1 /dev/urandom | tr -d ' \\n' > answer.txt; cat `+out+`/workspaces/*/answer.txt; ls `+out+`/workspaces"}}]
  - text: "Peeked."
`)
		// The folder that holds the output folder is readable, as a home or a
		// checkout is with the external read bit.
		spec := writeSpec(t, dir, "version: 1\nconcurrency: 1\ndefaults: {tools: [Bash], bash_mode: \"0467\", workspace: {dir: ws, mode: copy}, sandbox: {level: "+string(level)+", readable: [\""+dir+"\"]}}\n"+
			"jobs:\n  - {id: peek, model: peek, prompt: Peek., repeat: 2}\n")
		sum, err := newRunner(t, runner.Options{Out: out, Home: dir, Providers: newInProcess(scripts), Environ: os.Environ()}).
			Run(context.Background(), spec)
		require.NoError(t, err)
		require.Len(t, sum.Sessions, 2)
		first, second := sum.Sessions[0].Key, sum.Sessions[1].Key
		require.FileExists(t, filepath.Join(out, runner.WorkspacesDir, first, "answer.txt"), "the first session left no answer: the test proves nothing")
		results := toolResults(t, out, second)
		require.Len(t, results, 1)
		output := results[0].Content
		theirs := readFile(t, filepath.Join(out, runner.WorkspacesDir, first, "answer.txt"))
		require.Len(t, theirs, 24, "the first session's answer")
		assert.NotContains(t, output, theirs, "LEAK at level %s: the second session read the first's workspace:\n%s", level, output)
		assert.FileExists(t, filepath.Join(out, runner.WorkspacesDir, second, "answer.txt"), "the second session could not write its own workspace")
	})
}

// TestSessionsCannotReadEachOthersTempDirs: at level landlock a session's TMPDIR is a
// folder of the runner's temporary folder, which may lie where the tools can read (a
// TMPDIR in a home or a checkout with the external read bit). Two sessions run at once:
// the first writes its answer to its TMPDIR and waits; the second, told through a FIFO
// that the answer is there, looks in every TMPDIR beside its own. It must not read it.
func TestSessionsCannotReadEachOthersTempDirs(t *testing.T) {
	t.Parallel()
	requireLevel(t, sandbox.LevelLandlock)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	tmp, signals := filepath.Join(dir, "tmp"), filepath.Join(dir, "signals")
	for _, d := range []string{tmp, signals, filepath.Join(dir, "ws")} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	for _, f := range []string{"ready", "done"} {
		require.NoError(t, unix.Mkfifo(filepath.Join(signals, f), 0o644))
	}
	scripts := scriptsWith(t, "writer", `steps:
  - tool_calls: [{name: Bash, input: {command: "od -An -N12 -tx1 /dev/urandom | tr -d ' \\n' > $TMPDIR/answer.txt; cp $TMPDIR/answer.txt answer.txt; echo > `+signals+`/ready; timeout 60 cat `+signals+`/done"}}]
  - text: "Wrote."
`, "reader", `steps:
  - tool_calls: [{name: Bash, input: {command: "timeout 60 cat `+signals+`/ready; ls -a $(dirname $TMPDIR) $(dirname $(dirname $TMPDIR)); cat $(dirname $TMPDIR)/*/answer.txt $(dirname $(dirname $TMPDIR))/*/*/answer.txt; echo > `+signals+`/done"}}]
  - text: "Read."
`)
	spec := writeSpec(t, dir, "version: 1\nconcurrency: 2\ndefaults: {tools: [Bash], bash_mode: \"0467\", workspace: {dir: ws, mode: copy}, sandbox: {level: landlock, readable: [\""+dir+"\"], writable: [\""+signals+"\"]}}\n"+
		"jobs:\n  - {id: writer, model: writer, prompt: Write.}\n  - {id: reader, model: reader, prompt: Read.}\n")
	out := filepath.Join(dir, "out")
	sum, err := newRunner(t, runner.Options{Out: out, Home: dir, Providers: newInProcess(scripts), Environ: os.Environ(),
		Sandbox: runner.SandboxOptions{TempDir: tmp}}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Len(t, sum.Sessions, 2)
	theirs := readFile(t, filepath.Join(out, runner.WorkspacesDir, "writer", "answer.txt"))
	require.Len(t, theirs, 24, "the writer's answer")
	results := toolResults(t, out, "reader")
	require.Len(t, results, 1)
	assert.NotContains(t, results[0].Content, theirs, "LEAK: the reader read the writer's TMPDIR:\n%s", results[0].Content)
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, entries, "the run left temporary folders")
}

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// turnsScript answers three user inputs of one conversation in turn.
const turnsScript = `steps:
  - text: first answer
  - text: second answer
  - text: third answer
`

// execSetup returns a workspace folder, the environment (with its own AGENTRUN_HOME)
// and the path of a script holding content.
func execSetup(t *testing.T, script string) (dir string, env []string, scriptPath string) {
	t.Helper()
	dir = t.TempDir()
	scriptPath = writeFile(t, t.TempDir(), "steps.yaml", script)
	return dir, baseEnv(t), scriptPath
}

// projectDir returns the exec session folder of the project in dir.
func projectDir(t *testing.T, env []string) string {
	t.Helper()
	dir := projectDirOf(env)
	require.NotEmpty(t, dir, "one project folder under $AGENTRUN_HOME/projects")
	return dir
}

// projectDirOf is the exec session folder of the project, "" until exec made it.
func projectDirOf(env []string) string {
	for _, kv := range env {
		if home, ok := strings.CutPrefix(kv, "AGENTRUN_HOME="); ok {
			projects, _ := filepath.Glob(filepath.Join(home, "projects", "*"))
			if len(projects) == 1 {
				return projects[0]
			}
		}
	}
	return ""
}

// TestExecFormats checks exec's three stdout formats, with the prompt as an argument
// and on stdin.
func TestExecFormats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		stdin string
		check func(t *testing.T, stdout string)
	}{
		{
			name: "human from argument",
			args: []string{"exec", "Say", "something."},
			check: func(t *testing.T, stdout string) {
				assert.Regexp(t, `^● session \S+ · job exec · scripted/scripted · `, stdout)
				assert.Contains(t, stdout, "\nfirst answer\n")
				assert.Regexp(t, `\n✓ success · 1 turn · .*\n$`, stdout)
			},
		},
		{
			name:  "stream-json from stdin",
			args:  []string{"exec", "--output-format", "stream-json"},
			stdin: "Say something.\n",
			check: func(t *testing.T, stdout string) {
				evs := jsonLines(t, stdout)
				require.GreaterOrEqual(t, len(evs), 3)
				assert.Equal(t, "session_start", evs[0]["type"])
				last := evs[len(evs)-1]
				assert.Equal(t, "result", last["type"])
				assert.Equal(t, "success", last["status"])
				assert.Equal(t, "first answer", last["result"])
				assert.Equal(t, evs[0]["session_id"], last["session_id"])
				for _, ev := range evs[1 : len(evs)-1] {
					assert.NotEqual(t, "result", ev["type"])
				}
			},
		},
		{
			name: "resp",
			args: []string{"exec", "--output-format", "resp", "Say something."},
			check: func(t *testing.T, stdout string) {
				assert.True(t, strings.HasPrefix(stdout, "*"), "RESP frames start with an array header")
				assert.Contains(t, stdout, "$13\r\nSESSION_START\r\n")
				assert.Contains(t, stdout, "$4\r\nTEXT\r\n$12\r\nfirst answer\r\n")
				assert.Contains(t, stdout, "$6\r\nRESULT\r\n")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, env, script := execSetup(t, turnsScript)
			o := agentrun(t, invocation{args: append(tt.args, "--script", script), env: env, dir: dir, stdin: tt.stdin})
			require.Equal(t, 0, o.code, o.stderr)
			tt.check(t, o.stdout)
		})
	}
}

// TestExecFailure checks that a session that fails (the model's answer is cut at
// max_tokens) exits 1 and still ends its stream with a result.
func TestExecFailure(t *testing.T) {
	t.Parallel()
	dir, env, script := execSetup(t, "steps:\n  - text: This answer is cut\n    stop: max_tokens\n")
	o := agentrun(t, invocation{args: []string{"exec", "--script", script, "--output-format", "stream-json", "Go."}, env: env, dir: dir})
	assert.Equal(t, 1, o.code, o.stderr)
	evs := jsonLines(t, o.stdout)
	last := evs[len(evs)-1]
	assert.Equal(t, "result", last["type"])
	assert.Equal(t, "error_max_tokens", last["status"])
	assert.Equal(t, true, last["is_error"])
}

// TestExecSessions checks --session (create, then resume the same conversation),
// --continue, --fork and --list-sessions.
func TestExecSessions(t *testing.T) {
	t.Parallel()
	dir, env, script := execSetup(t, turnsScript)
	run := func(args ...string) outcome {
		t.Helper()
		o := agentrun(t, invocation{args: append([]string{"exec", "--script", script}, args...), env: env, dir: dir})
		require.Equal(t, 0, o.code, o.stderr)
		return o
	}
	messages := func(id string) []map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(projectDir(t, env), id, "messages.jsonl"))
		require.NoError(t, err)
		return jsonLines(t, string(b))
	}

	first := run("--session", "fix-1", "Start.")
	assert.Contains(t, first.stdout, "● session fix-1 ")
	assert.Contains(t, first.stdout, "\nfirst answer\n")
	require.Len(t, messages("fix-1"), 2, "one user and one assistant message")

	// The second run continues the conversation: the model sees the first turns and
	// gives its second answer, and messages.jsonl grows.
	second := run("--session", "fix-1", "Go on.")
	assert.Contains(t, second.stdout, "\nsecond answer\n")
	msgs := messages("fix-1")
	require.Len(t, msgs, 4)
	assert.Contains(t, string(mustJSON(t, msgs[0])), "Start.")
	assert.Contains(t, string(mustJSON(t, msgs[2])), "Go on.")
	// The session folder is the runner's, kept across invocations: each stream holds
	// both runs, and result.json is the second's.
	for _, name := range []string{"events.jsonl", "stream.jsonl"} {
		b, err := os.ReadFile(filepath.Join(projectDir(t, env), "fix-1", name))
		require.NoError(t, err)
		assert.Equal(t, 2, strings.Count(string(b), `"type":"session_start"`), name)
		assert.Equal(t, 2, strings.Count(string(b), `"type":"result"`), name)
	}
	var res map[string]any
	readJSON(t, filepath.Join(projectDir(t, env), "fix-1", "result.json"), &res)
	assert.Equal(t, "second answer", res["result"])

	// --continue picks the newest session of the folder.
	third := run("--continue", "And again.")
	assert.Contains(t, third.stdout, "● session fix-1 ")
	assert.Contains(t, third.stdout, "\nthird answer\n")
	require.Len(t, messages("fix-1"), 6)

	// --fork copies the conversation into a new session and leaves the source alone.
	before, err := os.ReadFile(filepath.Join(projectDir(t, env), "fix-1", "messages.jsonl"))
	require.NoError(t, err)
	forked := run("--session", "fix-1", "--fork", "Try another way.")
	m := regexp.MustCompile(`● session (\S+) `).FindStringSubmatch(forked.stdout)
	require.NotNil(t, m, forked.stdout)
	forkID := m[1]
	assert.NotEqual(t, "fix-1", forkID)
	assert.Contains(t, forked.stdout, "\n(script finished)\n", "the fork continues after the source's three answers")
	after, err := os.ReadFile(filepath.Join(projectDir(t, env), "fix-1", "messages.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "forking leaves the source unchanged")
	assert.Len(t, messages(forkID), 8)

	list := run("--list-sessions")
	lines := strings.Split(strings.TrimSuffix(list.stdout, "\n"), "\n")
	require.Len(t, lines, 3, list.stdout)
	assert.Regexp(t, `^NAME +MODIFIED +PREVIEW$`, lines[0])
	assert.Regexp(t, `^`+regexp.QuoteMeta(forkID)+` .* Start\.$`, lines[1], "newest first")
	assert.Regexp(t, `^fix-1 .* Start\.$`, lines[2])
}

// TestReplay checks that replaying a session's events.jsonl renders exactly its
// transcript, and as stream-json exactly its stream.jsonl.
func TestReplay(t *testing.T) {
	t.Parallel()
	spec := specDir(t, smallSpec("true"))
	out := filepath.Join(filepath.Dir(spec), "out")
	o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--progress", "off"}})
	require.Equal(t, 0, o.code, o.stderr)
	session := filepath.Join(out, "sessions", "write")
	events := filepath.Join(session, "events.jsonl")

	tests := map[string]struct {
		args []string
		want string
	}{
		"human":       {args: []string{"replay", events}, want: "transcript.txt"},
		"stream-json": {args: []string{"replay", "--output-format", "stream-json", events}, want: "stream.jsonl"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := agentrun(t, invocation{args: tt.args})
			require.Equal(t, 0, r.code, r.stderr)
			want, err := os.ReadFile(filepath.Join(session, tt.want))
			require.NoError(t, err)
			assert.Equal(t, string(want), r.stdout)
		})
	}
}

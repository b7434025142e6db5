package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		path      string
		content   string
		wantReply string
	}{
		"new file":          {path: "a.txt", content: "hello\n", wantReply: "wrote 6 bytes to a.txt"},
		"creates parents":   {path: "x/y/z.go", content: "package z\n\nfunc F() {}\n", wantReply: "wrote 23 bytes to x/y/z.go"},
		"empty content":     {path: "empty", content: "", wantReply: "wrote 0 bytes to empty"},
		"overwrites":        {path: "old.txt", content: "new", wantReply: "wrote 3 bytes to old.txt"},
		"through link":      {path: "link.txt", content: "via link\n", wantReply: "wrote 9 bytes to link.txt"},
		"exactly the limit": {path: "max.bin", content: strings.Repeat("a", MaxWriteBytes), wantReply: "wrote 1048576 bytes to max.bin"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, policy.DefaultMode)
			writeTree(t, env.Workspace, map[string]string{"old.txt": "old content that is longer\n", "target.txt": "t"})
			require.NoError(t, os.Symlink("target.txt", filepath.Join(env.Workspace, "link.txt")))
			res := call(t, Write{}, env, in{"path": tt.path, "content": tt.content})
			require.False(t, res.IsError, res.Content)
			assert.Equal(t, tt.wantReply, res.Content)
			got, err := os.ReadFile(filepath.Join(env.Workspace, tt.path))
			require.NoError(t, err)
			assert.Equal(t, tt.content, string(got))
		})
	}
}

func TestWriteKeepsMode(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	p := filepath.Join(env.Workspace, "run.sh")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	res := call(t, Write{}, env, in{"path": "run.sh", "content": "#!/bin/sh\necho hi\n"})
	require.False(t, res.IsError, res.Content)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
}

func TestWriteErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give string
		want string
	}{
		"no path":        {give: `{"content":"x"}`, want: "no path provided"},
		"no content":     {give: `{"path":"a.txt"}`, want: "no content provided (send an empty string to create an empty file)"},
		"null content":   {give: `{"path":"a.txt","content":null}`, want: "no content provided (send an empty string to create an empty file)"},
		"directory":      {give: `{"path":"dir","content":"x"}`, want: "dir is a directory"},
		"parent is file": {give: `{"path":"file.txt/x","content":"x"}`, want: "write file.txt/x: mkdir "},
		"bad json":       {give: `{"path":`, want: "invalid input: unexpected end of JSON input"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, policy.DefaultMode)
			writeTree(t, env.Workspace, map[string]string{"dir/x": "x", "file.txt": "f"})
			res := Write{}.Run(context.Background(), Call{Input: json.RawMessage(tt.give), Env: env})
			assert.True(t, res.IsError)
			assert.True(t, strings.HasPrefix(res.Content, tt.want), res.Content)
		})
	}
}

func TestWriteTooLarge(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	res := call(t, Write{}, env, in{"path": "big.txt", "content": strings.Repeat("a", MaxWriteBytes+1)})
	assert.True(t, res.IsError)
	assert.Equal(t, "content is 1048577 bytes; Write accepts at most 1048576 bytes (1 MiB): split the file or generate it with a command", res.Content)
	_, err := os.Stat(filepath.Join(env.Workspace, "big.txt"))
	assert.True(t, os.IsNotExist(err))
}

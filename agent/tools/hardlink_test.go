package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentrun/agentrun/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHardLinkNotModified: a hard link in the workspace to a file outside it, as
// `ln` makes one, is refused by Write and Edit, which leave the outside file as it
// was; Read shows it.
func TestHardLinkNotModified(t *testing.T) {
	t.Parallel()
	const original = "127.0.0.1 localhost\n"
	tests := []struct {
		name  string
		tool  Tool
		input in
		want  string
	}{
		{name: "Write", tool: Write{}, input: in{"path": "hosts", "content": "6.6.6.6 bank.example\n"},
			want: "hosts is a hard link with 2 names; its other names may lie outside the workspace: copy it first"},
		{name: "Write empty", tool: Write{}, input: in{"path": "hosts", "content": ""},
			want: "hosts is a hard link with 2 names; its other names may lie outside the workspace: copy it first"},
		{name: "Edit", tool: Edit{}, input: in{"path": "hosts", "old_string": "localhost", "new_string": "bank.example"},
			want: "hosts is a hard link with 2 names; its other names may lie outside the workspace: copy it first"},
		{name: "Read", tool: Read{}, input: in{"path": "hosts"}, want: "     1\t127.0.0.1 localhost\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, policy.DefaultMode)
			outside := filepath.Join(tempDir(t), "hosts")
			require.NoError(t, os.WriteFile(outside, []byte(original), 0o644))
			require.NoError(t, os.Link(outside, filepath.Join(env.Workspace, "hosts")))
			res := call(t, tt.tool, env, tt.input)
			assert.Equal(t, tt.want, res.Content)
			got, err := os.ReadFile(outside)
			require.NoError(t, err)
			assert.Equal(t, original, string(got), "the outside file is unchanged")
		})
	}
}

// TestHardLinkCopied: once copied, the file has one name and can be changed.
func TestHardLinkCopied(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	outside := filepath.Join(tempDir(t), "a.txt")
	require.NoError(t, os.WriteFile(outside, []byte("a\n"), 0o644))
	link := filepath.Join(env.Workspace, "a.txt")
	require.NoError(t, os.Link(outside, link))
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.WriteFile(link, []byte("a\n"), 0o644))
	res := call(t, Edit{}, env, in{"path": "a.txt", "old_string": "a", "new_string": "b"})
	require.False(t, res.IsError, res.Content)
	got, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "a\n", string(got))
}

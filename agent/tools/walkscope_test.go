package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newSecretsFixture is a workspace and home with secrets where Read refuses them: the
// home's .ssh/config and .aws/credentials, the workspace's .env, a nested key, links
// to them; and one ordinary file.
func newSecretsFixture(t *testing.T, mode string) *Env {
	t.Helper()
	env := newEnv(t, mode)
	writeTree(t, env.Home, map[string]string{
		".ssh/config":      "Host x # SECRET-SSH\n",
		".aws/credentials": "key = SECRET-AWS\n",
		"notes.txt":        "SECRET-FREE home notes\n",
	})
	writeTree(t, env.Workspace, map[string]string{
		".env":          "API_KEY=SECRET-ENV\n",
		"conf/tls.key":  "SECRET-TLS\n",
		"src/main.go":   "package main // SECRET-FREE\n",
		".env.example":  "API_KEY=SECRET-FREE-TEMPLATE\n",
		"sub/.netrc":    "password SECRET-NETRC\n",
		"sub/readme.md": "SECRET-FREE readme\n",
	})
	require.NoError(t, os.Symlink(filepath.Join(env.Home, ".ssh/config"), filepath.Join(env.Workspace, "sshconfig")))
	require.NoError(t, os.Symlink(filepath.Join(env.Home, ".ssh"), filepath.Join(env.Workspace, "sshdir")))
	return env
}

// TestWalkSkipsWhatReadRefuses: Grep finds, and Glob lists, nothing the policy would
// not let Read open, whether named directly, below a credential directory or through
// a link (a link to a credential directory is not listed either); ordinary files
// still match.
func TestWalkSkipsWhatReadRefuses(t *testing.T) {
	secrets := []string{"SECRET-SSH", "SECRET-AWS", "SECRET-ENV", "SECRET-TLS", "SECRET-NETRC"}
	hidden := []string{".ssh", "config", ".aws", "credentials", ".env", "tls.key", ".netrc", "sshconfig", "sshdir"}
	tests := []struct {
		name  string
		tool  Tool
		input in
		want  []string // lines the result must have
	}{
		{name: "Grep workspace", tool: Grep{}, input: in{"pattern": "SECRET"},
			want: []string{".env.example:1:API_KEY=SECRET-FREE-TEMPLATE", "src/main.go:1:package main // SECRET-FREE", "sub/readme.md:1:SECRET-FREE readme"}},
		{name: "Grep files in workspace", tool: Grep{}, input: in{"pattern": "SECRET", "output_mode": "files_with_matches"},
			want: []string{".env.example", "src/main.go", "sub/readme.md"}},
		{name: "Grep home", tool: Grep{}, input: in{"pattern": "SECRET", "path": "~"},
			want: []string{"notes.txt:1:SECRET-FREE home notes"}},
		{name: "Grep hidden glob", tool: Grep{}, input: in{"pattern": "SECRET", "path": "~", "glob": ".*/*"},
			want: []string{"No matches found"}},
		{name: "Glob workspace", tool: Glob{}, input: in{"pattern": "**/*"},
			want: []string{".env.example", "src/main.go", "sub/readme.md"}},
		{name: "Glob dot files", tool: Glob{}, input: in{"pattern": "**/.*"},
			want: []string{".env.example"}},
		{name: "Glob home", tool: Glob{}, input: in{"pattern": "*", "path": "~"},
			want: []string{"notes.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newSecretsFixture(t, policy.DefaultMode)
			res := call(t, tt.tool, env, tt.input)
			require.False(t, res.IsError, res.Content)
			for _, w := range tt.want {
				assert.Contains(t, res.Content, w)
			}
			for _, s := range secrets {
				assert.NotContains(t, res.Content, s)
			}
			for _, l := range strings.Split(strings.TrimSuffix(res.Content, "\n"), "\n") {
				p, _, _ := strings.Cut(l, ":")
				assert.NotContains(t, hidden, filepath.Base(p), "listed: %s", l)
			}
		})
	}
}

// TestWalkFollowsReadRule: with system read granted, Read opens credential files,
// and so Grep searches them: the walk applies the rule of Read, no other.
func TestWalkFollowsReadRule(t *testing.T) {
	env := newSecretsFixture(t, "4467")
	res := call(t, Read{}, env, in{"path": ".env"})
	require.False(t, res.IsError, res.Content)
	res = call(t, Grep{}, env, in{"pattern": "SECRET-(ENV|TLS|NETRC)", "output_mode": "files_with_matches"})
	assert.Equal(t, ".env\nconf/tls.key\nsub/.netrc\n", res.Content)
	res = call(t, Grep{}, env, in{"pattern": "SECRET-SSH", "path": "~"})
	assert.Contains(t, res.Content, ".ssh/config:1:Host x # SECRET-SSH")
}

package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSensitiveNames(t *testing.T) {
	tests := map[string]bool{
		".env": true, ".env.local": true, "prod.env": true, ".env.example": false, ".env.sample": false,
		"server.pem": true, "tls.key": true, "cert.p12": true, "id_rsa": true, "id_ed25519.pub": true,
		"tokens.json": true, "my-api-token.yaml": true, "client_secret.json": true, "password.txt": true,
		".git-credentials": true, ".netrc": true, ".npmrc": true, ".token": true, ".ssh": true, ".aws": true,
		"token.go": false, "secret_test.go": false, "tokenizer.json": false, "README.md": false,
		"token": false, "secrets": false, "keyboard.go": false, "main.go": false,
	}
	for name, want := range tests {
		assert.Equal(t, want, isSensitiveName(name), name)
	}
}

func TestSensitivePaths(t *testing.T) {
	tests := map[string]bool{
		"~/.ssh/id_rsa":           true,
		"/home/u/.aws/config":     true,
		"~/.config/gh/hosts.yml":  true,
		"~/.config/nvim/init.lua": false,
		"~/.ss*/id_*":             true,
		"~/*/x":                   false,
		"src/*.pem":               true,
		"src/*.go":                false,
		"*":                       false,
	}
	for p, want := range tests {
		assert.Equal(t, want, isSensitivePath(p), p)
	}
}

func TestScopePath(t *testing.T) {
	env := newEnv(t, DefaultMode)
	writeTree(t, env.Workspace, map[string]string{"main.go": ""})
	require.NoError(t, os.Symlink("/etc", filepath.Join(env.Workspace, "etc")))
	require.NoError(t, os.Symlink("/tmp", filepath.Join(env.Workspace, "tmplink")))
	tests := []struct {
		give string
		want scope
	}{
		{"main.go", scopeWorkspace},
		{"new/file.txt", scopeWorkspace},
		{"*.go", scopeWorkspace},
		{".", scopeWorkspace},
		{filepath.Join(env.Workspace, "main.go"), scopeWorkspace},
		{"/etc/passwd", scopeSystem},
		{"/", scopeSystem},
		{"/et*", scopeSystem},
		{"/usr/bin/env", scopeSystem},
		{"/dev/sda", scopeSystem},
		{"/dev/null", scopeNone},
		{"/dev/stdout", scopeSystem},
		{"/dev/stderr", scopeSystem},
		{"/dev/fd/3", scopeSystem},
		{"/proc/self/fd/3", scopeSystem},
		{"/dev/tcp/example.com/80", scopeNetwork},
		{"/tmp/scratch.txt", scopeNone},
		{"/tmp/../etc/passwd", scopeSystem},
		{"~", scopeExternal},
		{"~/notes.txt", scopeExternal},
		{"~root/x", scopeExternal},
		{"/mnt/data/x", scopeExternal},
		{"etc/passwd", scopeSystem},
		{"tmplink/x", scopeExternal},
		{"../outside.txt", scopeExternal},
		{".env", scopeSystem},
	}
	for _, tt := range tests {
		got, why := scopePath(env, tt.give, "", false)
		assert.Equal(t, tt.want, got, "%s: %s", tt.give, why)
	}
}

func TestScopePathWithoutEnv(t *testing.T) {
	for give, want := range map[string]scope{
		"x.go": scopeWorkspace, "a/../b": scopeWorkspace, "../x": scopeExternal, "/etc/x": scopeSystem, "~/x": scopeExternal,
	} {
		got, _ := scopePath(nil, give, "", false)
		assert.Equal(t, want, got, give)
	}
}

func TestRealPath(t *testing.T) {
	dir := tempDir(t)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a/b"), 0o755))
	require.NoError(t, os.Symlink("a/b", filepath.Join(dir, "rel")))
	require.NoError(t, os.Symlink("/nonexistent/target", filepath.Join(dir, "dangling")))
	require.NoError(t, os.Symlink("loop2", filepath.Join(dir, "loop1")))
	require.NoError(t, os.Symlink("loop1", filepath.Join(dir, "loop2")))
	tests := map[string]string{
		filepath.Join(dir, "rel/x"):    filepath.Join(dir, "a/b/x"),
		dir + "/rel/../c":              filepath.Join(dir, "a/c"),
		filepath.Join(dir, "dangling"): "/nonexistent/target",
		dir + "/missing/x/../y":        filepath.Join(dir, "missing/y"),
		"/":                            "/",
	}
	for give, want := range tests {
		assert.Equal(t, want, realPath(give), give)
	}
	assert.NotPanics(t, func() { realPath(filepath.Join(dir, "loop1", "x")) })
}

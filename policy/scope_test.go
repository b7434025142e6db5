package policy

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
	d := newDirs(t)
	writeTree(t, d.Workspace, map[string]string{"main.go": ""})
	require.NoError(t, os.Symlink("/etc", filepath.Join(d.Workspace, "etc")))
	require.NoError(t, os.Symlink("/tmp", filepath.Join(d.Workspace, "tmplink")))
	tests := []struct {
		give string
		want scope
	}{
		{"main.go", scopeWorkspace},
		{"new/file.txt", scopeWorkspace},
		{"*.go", scopeWorkspace},
		{".", scopeWorkspace},
		{filepath.Join(d.Workspace, "main.go"), scopeWorkspace},
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
		{"/dev/shm/scratch.bin", scopeNone},
		{"/dev/shm/../sda", scopeSystem},
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
		got, why := scopePath(d, tt.give, "", false)
		assert.Equal(t, tt.want, got, "%s: %s", tt.give, why)
	}
}

func TestScopePathWithoutDirs(t *testing.T) {
	for give, want := range map[string]scope{
		"x.go": scopeWorkspace, "a/../b": scopeWorkspace, "../x": scopeExternal, "/etc/x": scopeSystem, "~/x": scopeExternal,
	} {
		got, _ := scopePath(Dirs{}, give, "", false)
		assert.Equal(t, want, got, give)
	}
}

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// globTree is a workspace with ignore files and files of known ages.
var globTree = map[string]string{
	".gitignore":           "*.log\nbuild/\n/root-only.txt\n!keep.log\nvendor/**\n",
	"main.go":              "package main\n",
	"root-only.txt":        "ignored at the root\n",
	"docs/root-only.txt":   "not ignored below the root\n",
	"debug.log":            "ignored\n",
	"keep.log":             "re-included\n",
	"build/out.go":         "ignored dir\n",
	"vendor/x/y.go":        "ignored\n",
	"pkg/a.go":             "package pkg\n",
	"pkg/sub/b.go":         "package sub\n",
	"pkg/sub/.gitignore":   "b_test.go\n!*.log\n",
	"pkg/sub/b_test.go":    "ignored by the nested file\n",
	"pkg/sub/local.log":    "re-included by the nested file\n",
	".git/config":          "never listed\n",
	".github/workflow.yml": "hidden dirs are listed\n",
}

func setupGlob(t *testing.T) *Env {
	t.Helper()
	env := newEnv(t, policy.DefaultMode)
	writeTree(t, env.Workspace, globTree)
	// Ages: pkg/a.go newest, main.go oldest, the rest in between and equal.
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	err := filepath.WalkDir(env.Workspace, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			return os.Chtimes(p, base, base)
		}
		return err
	})
	require.NoError(t, err)
	require.NoError(t, os.Chtimes(filepath.Join(env.Workspace, "pkg/a.go"), base.Add(2*time.Hour), base.Add(2*time.Hour)))
	require.NoError(t, os.Chtimes(filepath.Join(env.Workspace, "main.go"), base.Add(-time.Hour), base.Add(-time.Hour)))
	return env
}

func TestGlob(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give in
		want string
	}{
		"all go files newest first":     {give: in{"pattern": "**/*.go"}, want: "pkg/a.go\npkg/sub/b.go\nmain.go\n"},
		"no slash matches at any depth": {give: in{"pattern": "*.go"}, want: "pkg/a.go\npkg/sub/b.go\nmain.go\n"},
		"anchored":                      {give: in{"pattern": "pkg/*.go"}, want: "pkg/a.go\n"},
		"path argument":                 {give: in{"pattern": "*.go", "path": "pkg/sub"}, want: "pkg/sub/b.go\n"},
		"logs and negations":            {give: in{"pattern": "**/*.log"}, want: "keep.log\npkg/sub/local.log\n"},
		"anchored ignore rule":          {give: in{"pattern": "**/root-only.txt"}, want: "docs/root-only.txt\n"},
		"hidden dirs but not .git":      {give: in{"pattern": "**/*.{yml,toml}"}, want: ".github/workflow.yml\n"},
		"literal path":                  {give: in{"pattern": "pkg/sub/b.go"}, want: "pkg/sub/b.go\n"},
		"dot slash prefix":              {give: in{"pattern": "./pkg/**/*.go"}, want: "pkg/a.go\npkg/sub/b.go\n"},
		"no match":                      {give: in{"pattern": "**/*.rs"}, want: "No files found"},
		"missing literal dir":           {give: in{"pattern": "nope/*.go"}, want: "No files found"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			env := setupGlob(t)
			res := call(t, Glob{}, env, tt.give)
			require.False(t, res.IsError, res.Content)
			assert.Equal(t, tt.want, res.Content)
		})
	}
}

func TestGlobAbsolutePattern(t *testing.T) {
	t.Parallel()
	env := setupGlob(t)
	res := call(t, Glob{}, env, in{"pattern": filepath.Join(env.Workspace, "pkg") + "/**/*.go"})
	assert.Equal(t, "pkg/a.go\npkg/sub/b.go\n", res.Content)
}

func TestGlobCapped(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	files := map[string]string{}
	for i := range MaxGlobResults + 5 {
		files[fmt.Sprintf("f/%04d.txt", i)] = ""
	}
	writeTree(t, env.Workspace, files)
	res := call(t, Glob{}, env, in{"pattern": "**/*.txt"})
	lines := strings.Split(strings.TrimSuffix(res.Content, "\n"), "\n")
	require.Len(t, lines, MaxGlobResults+1)
	assert.Equal(t, "[... 5 more files not shown (1005 in all); use a narrower pattern or path ...]", lines[MaxGlobResults])

	env.MaxOutput = 500
	res = call(t, Glob{}, env, in{"pattern": "**/*.txt"})
	assert.LessOrEqual(t, len(res.Content), 500)
	assert.Contains(t, res.Content, "more files not shown (1005 in all)")
}

func TestGlobErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give string
		want string
	}{
		"no pattern":       {give: `{}`, want: "no pattern provided"},
		"path not found":   {give: `{"pattern":"*","path":"nope"}`, want: "directory not found: nope"},
		"path is a file":   {give: `{"pattern":"*","path":"main.go"}`, want: "not a directory: main.go"},
		"bad class":        {give: `{"pattern":"*.[go"}`, want: `invalid pattern "*.[go": unclosed character class '['`},
		"dotdot late":      {give: `{"pattern":"pkg/*/../x"}`, want: "the pattern may use '..' only before its first wildcard"},
		"pattern not text": {give: `{"pattern":5}`, want: "invalid input: json: cannot unmarshal number into Go struct field globInput.pattern of type string"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			env := setupGlob(t)
			res := Glob{}.Run(context.Background(), Call{Input: json.RawMessage(tt.give), Env: env})
			assert.True(t, res.IsError)
			assert.Equal(t, tt.want, res.Content)
		})
	}
}

func TestGlobCancelled(t *testing.T) {
	t.Parallel()
	env := setupGlob(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := Glob{}.Run(ctx, Call{Input: json.RawMessage(`{"pattern":"**"}`), Env: env})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "context canceled")
}

func TestSplitGlob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give               string
		wantRoot, wantRest string
		wantAnchored       bool
	}{
		{"*.go", "", "*.go", false},
		{"**/*.go", "", "**/*.go", true},
		{"src/**/*.go", "src", "**/*.go", true},
		{"src/main.go", "src", "main.go", true},
		{"/etc/*", "/etc", "*", true},
		{"/*", "/", "*", true},
		{"../../x/*.go", "../../x", "*.go", true},
		{"./a/b/*", "a/b", "*", true},
	}
	for _, tt := range tests {
		root, rest, anchored := splitGlob(tt.give)
		assert.Equal(t, tt.wantRoot, root, tt.give)
		assert.Equal(t, tt.wantRest, rest, tt.give)
		assert.Equal(t, tt.wantAnchored, anchored, tt.give)
	}
}

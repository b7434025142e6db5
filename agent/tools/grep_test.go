package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var grepTree = map[string]string{
	".gitignore":     "ignored/\n*.min.js\n",
	"a.txt":          "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
	"b.go":           "package b\n\n// TODO: fix\nfunc B() {}\n// todo later\n",
	"sub/c.go":       "package sub\n// TODO here\n",
	"ignored/d.go":   "// TODO ignored\n",
	"app.min.js":     "TODO minified\n",
	"bin.dat":        "TODO\x00binary\n",
	".git/HEAD":      "TODO in git\n",
	"sub/latin1.txt": "caf\xe9 TODO\n",
}

func TestGrep(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give in
		want string
	}{
		"content": {
			give: in{"pattern": "TODO"},
			want: "b.go:3:// TODO: fix\nsub/c.go:2:// TODO here\nsub/latin1.txt:1:caf\uFFFD TODO\n",
		},
		"case insensitive": {
			give: in{"pattern": "todo", "case_insensitive": true, "glob": "*.go"},
			want: "b.go:3:// TODO: fix\nb.go:5:// todo later\nsub/c.go:2:// TODO here\n",
		},
		"glob with a slash": {
			give: in{"pattern": "TODO", "glob": "sub/*.go"},
			want: "sub/c.go:2:// TODO here\n",
		},
		"files with matches": {
			give: in{"pattern": "TODO", "output_mode": "files_with_matches"},
			want: "b.go\nsub/c.go\nsub/latin1.txt\n",
		},
		"count": {
			give: in{"pattern": "(?i)todo", "output_mode": "count"},
			want: "b.go:2\nsub/c.go:1\nsub/latin1.txt:1\n",
		},
		"context with groups": {
			give: in{"pattern": "^(two|three|nine)$", "context": 1, "path": "a.txt"},
			want: "a.txt-1-one\na.txt:2:two\na.txt:3:three\na.txt-4-four\n--\na.txt-8-eight\na.txt:9:nine\na.txt-10-ten\n",
		},
		"context merges close groups": {
			give: in{"pattern": "^(two|five)$", "context": 1, "path": "a.txt"},
			want: "a.txt-1-one\na.txt:2:two\na.txt-3-three\na.txt-4-four\na.txt:5:five\na.txt-6-six\n",
		},
		"context across files": {
			give: in{"pattern": "TODO", "context": 1, "glob": "*.go"},
			want: "b.go-2-\nb.go:3:// TODO: fix\nb.go-4-func B() {}\n--\nsub/c.go-1-package sub\nsub/c.go:2:// TODO here\n",
		},
		"single file": {
			give: in{"pattern": "e$", "path": "a.txt"},
			want: "a.txt:1:one\na.txt:3:three\na.txt:5:five\na.txt:9:nine\n",
		},
		"explicit ignored dir": {
			give: in{"pattern": "TODO", "path": "ignored"},
			want: "ignored/d.go:1:// TODO ignored\n",
		},
		"no matches": {
			give: in{"pattern": "nothing here"},
			want: "No matches found\n",
		},
		"binary file named": {
			give: in{"pattern": "TODO", "path": "bin.dat"},
			want: "No matches found\n[... the file is binary; Grep searches text files only ...]\n",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, policy.DefaultMode)
			writeTree(t, env.Workspace, grepTree)
			res := call(t, Grep{}, env, tt.give)
			require.False(t, res.IsError, res.Content)
			assert.Equal(t, tt.want, res.Content)
		})
	}
}

func TestGrepErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give string
		want string
	}{
		"no pattern":    {give: `{}`, want: "no pattern provided"},
		"bad regexp":    {give: `{"pattern":"a("}`, want: "invalid regular expression: error parsing regexp: missing closing ): `a(`"},
		"bad mode":      {give: `{"pattern":"a","output_mode":"lines"}`, want: `output_mode "lines": want content, files_with_matches or count`},
		"context range": {give: `{"pattern":"a","context":99}`, want: "context must be between 0 and 20 lines"},
		"bad glob":      {give: `{"pattern":"a","glob":"[x"}`, want: `invalid glob "[x": unclosed character class '['`},
		"missing path":  {give: `{"pattern":"a","path":"nope"}`, want: "path not found: nope"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			res := Grep{}.Run(context.Background(), Call{Input: json.RawMessage(tt.give), Env: newEnv(t, policy.DefaultMode)})
			assert.True(t, res.IsError)
			assert.Equal(t, tt.want, res.Content)
		})
	}
}

func TestGrepCapped(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	env.MaxOutput = 1000
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "match %d\n", i)
	}
	writeTree(t, env.Workspace, map[string]string{"big.txt": b.String(), "long.txt": "match " + strings.Repeat("é", 3000) + "\n"})
	res := call(t, Grep{}, env, in{"pattern": "match", "path": "big.txt"})
	assert.LessOrEqual(t, len(res.Content), env.MaxOutput)
	assert.True(t, strings.HasSuffix(res.Content, "[... output capped at 700 bytes; narrow the search with path, glob or a more specific pattern ...]\n"), res.Content)

	env.MaxOutput = DefaultMaxOutput
	res = call(t, Grep{}, env, in{"pattern": "match", "path": "long.txt"})
	assert.True(t, strings.HasSuffix(res.Content, " [... line cut ...]\n"))
	assert.Less(t, len(res.Content), maxGrepLine+100)
}

// TestGrepSymlinks: a link to a file the policy forbids is skipped, a link into the
// home directory is read (0467 grants external read).
func TestGrepSymlinks(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	writeTree(t, env.Workspace, map[string]string{"a.txt": "root here\n"})
	writeTree(t, env.Home, map[string]string{"h.txt": "root at home\n"})
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(env.Workspace, "passwd")))
	require.NoError(t, os.Symlink(filepath.Join(env.Home, "h.txt"), filepath.Join(env.Workspace, "h.txt")))
	res := call(t, Grep{}, env, in{"pattern": "root"})
	assert.Equal(t, "a.txt:1:root here\nh.txt:1:root at home\n[... skipped 1 symbolic links that the bash_mode policy does not allow reading ...]\n", res.Content)
}

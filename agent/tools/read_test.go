package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/agentrun/agentrun/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRead(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"three.txt":   "a\nb\nc\n",
		"noeol.txt":   "x\ny",
		"empty.txt":   "",
		"latin1.txt":  "caf\xe9\n",
		"crlf.txt":    "a\r\nb\r\n",
		"sub/dir.txt": "deep\n",
	}
	tests := map[string]struct {
		give in
		want string
	}{
		"whole file": {
			give: in{"path": "three.txt"}, want: "     1\ta\n     2\tb\n     3\tc\n",
		},
		"offset": {
			give: in{"path": "three.txt", "offset": 2}, want: "     2\tb\n     3\tc\n",
		},
		"offset and limit": {
			give: in{"path": "three.txt", "offset": 2, "limit": 1},
			want: "     2\tb\n[... showed lines 2-2 of 3; continue with offset=3 ...]\n",
		},
		"numbers as strings": {
			give: in{"path": "three.txt", "offset": "3", "limit": "5"}, want: "     3\tc\n",
		},
		"offset past the end": {
			give: in{"path": "three.txt", "offset": 9}, want: "[offset 9 is past the end of three.txt, which has 3 lines]",
		},
		"no final newline": {
			give: in{"path": "noeol.txt"}, want: "     1\tx\n     2\ty\n",
		},
		"empty": {
			give: in{"path": "empty.txt"}, want: "[empty.txt is empty]",
		},
		"invalid utf-8 replaced": {
			give: in{"path": "latin1.txt"}, want: "     1\tcaf\uFFFD\n",
		},
		"crlf kept": {
			give: in{"path": "crlf.txt"}, want: "     1\ta\r\n     2\tb\r\n",
		},
		"nested relative path": {
			give: in{"path": "sub/dir.txt"}, want: "     1\tdeep\n",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, policy.DefaultMode)
			writeTree(t, env.Workspace, files)
			res := call(t, Read{}, env, tt.give)
			require.False(t, res.IsError, res.Content)
			assert.Equal(t, tt.want, res.Content)
		})
	}
}

func TestReadAbsoluteAndHome(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	writeTree(t, env.Workspace, map[string]string{"a.txt": "ws\n"})
	writeTree(t, env.Home, map[string]string{"h.txt": "home\n"})
	res := call(t, Read{}, env, in{"path": filepath.Join(env.Workspace, "a.txt")})
	assert.Equal(t, "     1\tws\n", res.Content)
	res = call(t, Read{}, env, in{"path": "~/h.txt"})
	assert.Equal(t, "     1\thome\n", res.Content, "external read is granted by 0467")
}

func TestReadErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give string // raw JSON input
		want string
	}{
		"no path":       {give: `{}`, want: "no path provided"},
		"empty path":    {give: `{"path":""}`, want: "no path provided"},
		"not found":     {give: `{"path":"missing.txt"}`, want: "file not found: missing.txt"},
		"parent a file": {give: `{"path":"a.txt/x"}`, want: "file not found: a.txt/x (a parent is not a directory)"},
		"directory":     {give: `{"path":"dir"}`, want: "dir is a directory; use Glob to list its files"},
		"binary":        {give: `{"path":"bin.dat"}`, want: "bin.dat is a binary file (5 bytes); Read shows text files only"},
		"named pipe":    {give: `{"path":"fifo"}`, want: "fifo is not a regular file (a device, socket or named pipe)"},
		"bad offset":    {give: `{"path":"a.txt","offset":0}`, want: "offset must be 1 or more: the first line is 1"},
		"bad limit":     {give: `{"path":"a.txt","limit":-1}`, want: "limit must be 1 or more"},
		"offset float":  {give: `{"path":"a.txt","offset":1.5}`, want: "invalid input: want an integer, got 1.5"},
		"not an object": {give: `[1]`, want: "invalid input: json: cannot unmarshal array into Go value of type tools.readInput"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, policy.DefaultMode)
			writeTree(t, env.Workspace, map[string]string{"a.txt": "a\n", "dir/x": "x", "bin.dat": "ab\x00cd"})
			require.NoError(t, syscall.Mkfifo(filepath.Join(env.Workspace, "fifo"), 0o644))
			res := Read{}.Run(context.Background(), Call{Input: json.RawMessage(tt.give), Env: env})
			assert.True(t, res.IsError)
			assert.Equal(t, tt.want, res.Content)
		})
	}
}

func TestReadPermissionDenied(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads every file; fileError's mapping is checked in TestFileError")
	}
	env := newEnv(t, policy.DefaultMode)
	writeTree(t, env.Workspace, map[string]string{"secret.txt": "x\n"})
	require.NoError(t, os.Chmod(filepath.Join(env.Workspace, "secret.txt"), 0))
	res := call(t, Read{}, env, in{"path": "secret.txt"})
	assert.True(t, res.IsError)
	assert.Equal(t, "permission denied: secret.txt", res.Content)
}

func TestFileError(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "permission denied: p", fileError("p", &fs.PathError{Op: "open", Path: "/x/p", Err: fs.ErrPermission}))
	assert.Equal(t, "file not found: p", fileError("p", &fs.PathError{Op: "open", Path: "/x/p", Err: fs.ErrNotExist}))
}

func TestReadCapped(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	env.MaxOutput = 1000
	var b strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&b, "line %03d\n", i)
	}
	writeTree(t, env.Workspace, map[string]string{"big.txt": b.String()})

	res := call(t, Read{}, env, in{"path": "big.txt"})
	require.False(t, res.IsError)
	assert.LessOrEqual(t, len(res.Content), env.MaxOutput)
	lines := strings.Split(strings.TrimSuffix(res.Content, "\n"), "\n")
	note := lines[len(lines)-1]
	// 700 bytes of budget hold 43 lines of 16 bytes ("   nnn\tline nnn\n").
	assert.Equal(t, "[... output capped at 700 bytes: showed lines 1-43 of 500; continue with offset=44 ...]", note)
	assert.Equal(t, "    43\tline 043", lines[len(lines)-2])

	res = call(t, Read{}, env, in{"path": "big.txt", "offset": 44, "limit": 2})
	assert.Equal(t, "    44\tline 044\n    45\tline 045\n[... showed lines 44-45 of 500; continue with offset=46 ...]\n", res.Content)
}

func TestReadLongLine(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	env.MaxOutput = 1000
	long := strings.Repeat("é", 2000) // 4000 bytes of two-byte characters
	writeTree(t, env.Workspace, map[string]string{"min.js": long + "\nnext\n"})
	res := call(t, Read{}, env, in{"path": "min.js"})
	require.False(t, res.IsError)
	assert.True(t, utf8.ValidString(res.Content))
	assert.LessOrEqual(t, len(res.Content), env.MaxOutput)
	assert.True(t, strings.HasPrefix(res.Content, "     1\téé"))
	assert.Contains(t, res.Content, "[... line 1 is longer than 700 bytes and was cut; use Grep or Bash (cut -c) to see the rest ...]")
	assert.Contains(t, res.Content, "[... continue with offset=2 ...]")
}

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

const editSource = `package main

import "fmt"

func main() {
	fmt.Println("hello")
	fmt.Println("hello")
}
`

func TestEdit(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give     in
		wantFile string
		want     string
	}{
		"unique replacement": {
			give:     in{"old_string": "import \"fmt\"", "new_string": "import (\n\t\"fmt\"\n\t\"os\"\n)"},
			wantFile: strings.Replace(editSource, "import \"fmt\"", "import (\n\t\"fmt\"\n\t\"os\"\n)", 1),
			want: "Edit(main.go) [+4 -1 lines]\n--- a/main.go\n+++ b/main.go\n@@ -1,6 +1,9 @@\n package main\n \n" +
				"-import \"fmt\"\n+import (\n+\t\"fmt\"\n+\t\"os\"\n+)\n \n func main() {\n \tfmt.Println(\"hello\")\n",
		},
		"replace all": {
			give:     in{"old_string": "hello", "new_string": "bye", "replace_all": true},
			wantFile: strings.ReplaceAll(editSource, "hello", "bye"),
			want: "Edit(main.go) [+2 -2 lines] (replaced 2 occurrences)\n--- a/main.go\n+++ b/main.go\n@@ -3,6 +3,6 @@\n" +
				" import \"fmt\"\n \n func main() {\n-\tfmt.Println(\"hello\")\n-\tfmt.Println(\"hello\")\n" +
				"+\tfmt.Println(\"bye\")\n+\tfmt.Println(\"bye\")\n }\n",
		},
		"replace all as string": {
			give:     in{"old_string": "hello", "new_string": "bye", "replace_all": "true"},
			wantFile: strings.ReplaceAll(editSource, "hello", "bye"),
			want:     "Edit(main.go) [+2 -2 lines] (replaced 2 occurrences)",
		},
		"delete": {
			give:     in{"old_string": "\tfmt.Println(\"hello\")\n\tfmt.Println(\"hello\")\n", "new_string": ""},
			wantFile: "package main\n\nimport \"fmt\"\n\nfunc main() {\n}\n",
			want:     "Edit(main.go) [+0 -2 lines]\n--- a/main.go\n+++ b/main.go\n@@ -3,6 +3,4 @@\n import \"fmt\"\n \n func main() {\n-\tfmt.Println(\"hello\")\n-\tfmt.Println(\"hello\")\n }\n",
		},
		"within a line": {
			give:     in{"old_string": "package main", "new_string": "package app"},
			wantFile: strings.Replace(editSource, "package main", "package app", 1),
			want:     "Edit(main.go) [+1 -1 lines]\n--- a/main.go\n+++ b/main.go\n@@ -1,4 +1,4 @@\n-package main\n+package app\n \n import \"fmt\"\n \n",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, policy.DefaultMode)
			writeTree(t, env.Workspace, map[string]string{"main.go": editSource})
			tt.give["path"] = "main.go"
			res := call(t, Edit{}, env, tt.give)
			require.False(t, res.IsError, res.Content)
			assert.True(t, strings.HasPrefix(res.Content, tt.want), "got:\n%s", res.Content)
			got, err := os.ReadFile(filepath.Join(env.Workspace, "main.go"))
			require.NoError(t, err)
			assert.Equal(t, tt.wantFile, string(got))
		})
	}
}

func TestEditErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give string
		want string
	}{
		"not unique": {
			give: `{"path":"main.go","old_string":"fmt.Println(\"hello\")","new_string":"x"}`,
			want: "old_string matches 2 times in main.go; add surrounding lines to old_string to make it unique, or set replace_all to true to replace every match",
		},
		"not found": {
			give: `{"path":"main.go","old_string":"goodbye","new_string":"x"}`,
			want: "old_string not found in main.go. Hint: old_string must match the file exactly, including whitespace and indentation; Read the file to copy the current text.",
		},
		"whitespace differs": {
			give: `{"path":"main.go","old_string":"func main() {\n    fmt.Println","new_string":"x"}`,
			want: "old_string not found in main.go. Hint: the text exists with different whitespace; check indentation (tabs or spaces) and trailing spaces, and Read the file to copy it exactly.",
		},
		"crlf file": {
			give: `{"path":"crlf.txt","old_string":"a\nb","new_string":"x"}`,
			want: "old_string not found in crlf.txt. Hint: the file has CRLF line endings; old_string must contain the \\r characters too.",
		},
		"same strings":  {give: `{"path":"main.go","old_string":"a","new_string":"a"}`, want: "old_string and new_string are the same; there is nothing to change"},
		"empty old":     {give: `{"path":"main.go","old_string":"","new_string":"a"}`, want: "old_string is empty; use Write to create a file or to replace all of it"},
		"no old":        {give: `{"path":"main.go","new_string":"a"}`, want: "no old_string provided"},
		"no new":        {give: `{"path":"main.go","old_string":"a"}`, want: "no new_string provided (send an empty string to delete old_string)"},
		"no path":       {give: `{"old_string":"a","new_string":"b"}`, want: "no path provided"},
		"missing file":  {give: `{"path":"nope.go","old_string":"a","new_string":"b"}`, want: "file not found: nope.go"},
		"directory":     {give: `{"path":"dir","old_string":"a","new_string":"b"}`, want: "dir is a directory; use Glob to list its files"},
		"binary":        {give: `{"path":"bin.dat","old_string":"a","new_string":"b"}`, want: "bin.dat is a binary file; Edit changes text files only"},
		"replace_all 2": {give: `{"path":"main.go","old_string":"a","new_string":"b","replace_all":"maybe"}`, want: "invalid input: want true or false, got \"maybe\""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, policy.DefaultMode)
			writeTree(t, env.Workspace, map[string]string{"main.go": editSource, "crlf.txt": "a\r\nb\r\n", "dir/x": "", "bin.dat": "a\x00b"})
			res := Edit{}.Run(context.Background(), Call{Input: json.RawMessage(tt.give), Env: env})
			assert.True(t, res.IsError)
			assert.Equal(t, tt.want, res.Content)
			got, err := os.ReadFile(filepath.Join(env.Workspace, "main.go"))
			require.NoError(t, err)
			assert.Equal(t, editSource, string(got), "the file is unchanged")
		})
	}
}

func TestEditTooLarge(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	writeTree(t, env.Workspace, map[string]string{"big.txt": strings.Repeat("a", MaxEditBytes-1) + "b"})
	res := call(t, Edit{}, env, in{"path": "big.txt", "old_string": "b", "new_string": "bb"})
	assert.True(t, res.IsError)
	assert.Equal(t, "the edited file would be 10485761 bytes; Edit writes files of at most 10485760 bytes (10 MiB)", res.Content)

	writeTree(t, env.Workspace, map[string]string{"huge.txt": strings.Repeat("a", MaxEditBytes+1)})
	res = call(t, Edit{}, env, in{"path": "huge.txt", "old_string": "a", "new_string": "b"})
	assert.Equal(t, "huge.txt is 10485761 bytes; Edit changes files of at most 10485760 bytes (10 MiB)", res.Content)
}

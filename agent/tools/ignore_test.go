package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGitignore(t *testing.T) {
	tests := []struct {
		name  string
		rules string
		path  string
		isDir bool
		want  bool
	}{
		{"basename anywhere", "*.log", "a/b/debug.log", false, true},
		{"basename at root", "*.log", "debug.log", false, true},
		{"no match", "*.log", "main.go", false, false},
		{"comment", "# *.go", "main.go", false, false},
		{"blank lines", "\n\n*.tmp\n", "x.tmp", false, true},
		{"escaped hash", `\#notes`, "#notes", false, true},
		{"negation", "*.log\n!keep.log", "keep.log", false, false},
		{"negation order", "!keep.log\n*.log", "keep.log", false, true},
		{"escaped bang", `\!important`, "!important", false, true},
		{"dir only matches dir", "build/", "build", true, true},
		{"dir only skips file", "build/", "build", false, false},
		{"dir only nested", "build/", "a/build", true, true},
		{"anchored", "/todo.txt", "todo.txt", false, true},
		{"anchored not nested", "/todo.txt", "a/todo.txt", false, false},
		{"middle slash anchors", "doc/frotz", "doc/frotz", false, true},
		{"middle slash not nested", "doc/frotz", "a/doc/frotz", false, false},
		{"leading double star", "**/foo", "x/y/foo", false, true},
		{"trailing double star", "abc/**", "abc/x/y", false, true},
		{"inner double star", "a/**/b", "a/x/y/b", false, true},
		{"question mark", "file?.txt", "file1.txt", false, true},
		{"class", "*.[oa]", "lib.a", false, true},
		{"trailing spaces trimmed", "*.bak   ", "x.bak", false, true},
		{"escaped trailing space", `name\ `, "name ", false, true},
		{"crlf lines", "*.o\r\n*.a\r\n", "x.a", false, true},
		{"invalid pattern skipped", "[oops\n*.o", "x.o", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ignoreFile{rules: parseIgnore(tt.rules)}
			_, ignored := f.match(tt.path, tt.isDir)
			assert.Equal(t, tt.want, ignored)
		})
	}
}

package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGlobMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		path    string
		want    bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "main.gox", false},
		{"*.go", "dir/main.go", false},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c/main.go", true},
		{"src/**/*.go", "src/main.go", true},
		{"src/**/*.go", "src/a/b/main.go", true},
		{"src/**/*.go", "lib/a/main.go", false},
		{"src/**", "src/a/b", true},
		{"**/test/**", "a/test/b/c.txt", true},
		{"**/test/**", "a/testing/c.txt", false},
		{"a/**/b", "a/b", true},
		{"a/**/**/b", "a/x/y/b", true},
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"?.txt", "é.txt", true},
		{"[abc].txt", "b.txt", true},
		{"[abc].txt", "d.txt", false},
		{"[a-c]x", "bx", true},
		{"[!a-c]x", "bx", false},
		{"[^a-c]x", "dx", true},
		{"[]]", "]", true},
		{"[é-ë]", "ê", true},
		{"*.{go,md}", "README.md", true},
		{"*.{go,md}", "main.go", true},
		{"*.{go,md}", "main.rs", false},
		{"{src,test}/**/*.go", "test/x/y.go", true},
		{"{a,{b,c}}.txt", "c.txt", true},
		{"{single}.txt", "{single}.txt", true},
		{`\*.txt`, "*.txt", true},
		{`\*.txt`, "a.txt", false},
		{"*", ".hidden", true},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"**", "any/thing/at/all", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.path, func(t *testing.T) {
			g, err := compileGlob(tt.pattern)
			require.NoError(t, err)
			assert.Equal(t, tt.want, g.match(tt.path))
		})
	}
}

func TestGlobCompileErrors(t *testing.T) {
	t.Parallel()
	_, err := compileGlob("[abc")
	assert.ErrorIs(t, err, errUnclosedClass)
	_, err = compileGlob("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}")
	assert.ErrorIs(t, err, errTooManyAlts)
}

func TestGitignore(t *testing.T) {
	t.Parallel()
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

func TestSegmentMatchesOnlyWholeNames(t *testing.T) {
	t.Parallel()
	seg, err := compileSegment("ab")
	require.NoError(t, err)
	assert.True(t, seg.match("ab"))
	assert.False(t, seg.match("abc"))
	assert.False(t, seg.match("xab"))
}

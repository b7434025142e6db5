package pathname

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGlobMatch(t *testing.T) {
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
			g, err := Compile(tt.pattern)
			require.NoError(t, err)
			assert.Equal(t, tt.want, g.Match(tt.path))
		})
	}
}

func TestGlobCompileErrors(t *testing.T) {
	_, err := Compile("[abc")
	assert.ErrorIs(t, err, ErrUnclosedClass)
	_, err = Compile("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}")
	assert.ErrorIs(t, err, ErrTooManyAlternatives)
}

func TestSegmentMatchesOnlyWholeNames(t *testing.T) {
	seg, err := CompileSegment("ab")
	require.NoError(t, err)
	assert.True(t, seg.Match("ab"))
	assert.False(t, seg.Match("abc"))
	assert.False(t, seg.Match("xab"))
}

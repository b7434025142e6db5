package runner

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/fuzzguard"
)

func TestParseAlternates(t *testing.T) {
	for name, c := range map[string]struct {
		give string
		want []string
	}{
		"absolute":                  {"/srv/repo.git/objects\n", []string{"/srv/repo.git/objects"}},
		"relative to the folder":    {"../../other/.git/objects", []string{"/a/other/.git/objects"}},
		"comments and blanks":       {"# a comment\n\n/x/objects\n#/y/objects\n", []string{"/x/objects"}},
		"several":                   {"/x/objects\n/y/objects\n", []string{"/x/objects", "/y/objects"}},
		"quoted":                    {`"/with \"quote\"/and\ttab/\303\251"` + "\n", []string{"/with \"quote\"/and\ttab/\u00e9"}},
		"a space is the path's":     {" /x/objects", []string{"/a/b/objects/ /x/objects"}},
		"a bad quote names none":    {`"/x\q"` + "\n/y\n", []string{"/y"}},
		"an empty quote names none": {`""`, nil},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, c.want, parseAlternates([]byte(c.give), "/a/b/objects"))
		})
	}
}

// FuzzParseAlternates: whatever lines are around it, a path that git writes in an
// alternates file (quoted as git quotes one where it must be) is read back as that
// path; and every path read is absolute and clean.
func FuzzParseAlternates(f *testing.F) {
	f.Add([]byte("# c\n"), "/srv/x.git/objects")
	f.Fuzz(func(t *testing.T, around []byte, path string) {
		fuzzguard.Run(len(around)+len(path), func() {
			for _, p := range parseAlternates(around, "/a/objects") {
				assert.True(t, filepath.IsAbs(p) && filepath.Clean(p) == p, "%q", p)
			}
			if path == "" || strings.ContainsAny(path, "\n\x00") {
				return
			}
			doc := fmt.Sprintf("%s\n%s\n%s", around, quoteC(path), around)
			want := path
			if !filepath.IsAbs(want) {
				want = filepath.Join("/a/objects", want)
			}
			assert.Contains(t, parseAlternates([]byte(doc), "/a/objects"), filepath.Clean(want), "%q", doc)
		})
	})
}

// quoteC quotes path as git's quote_c_style does, where git would: one that starts with
// a quote or # , or holds a control character, a backslash or a byte above 0x7f.
func quoteC(path string) string {
	must := path[0] == '"' || path[0] == '#'
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '"' || c == '\\':
			must = true
			b.WriteString(`\` + string(c))
		case c < 0x20 || c >= 0x7f:
			must = true
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	if !must {
		return path
	}
	return b.String()
}

func TestParseGitlinks(t *testing.T) {
	out := "100644 3b18e512dba79e4c8300dd08aeb37f8e728b8dad 0\thello.txt\x00" +
		"160000 1111111111111111111111111111111111111111 0\tvendor/lib\x00" +
		"160000 2222222222222222222222222222222222222222 0\twith\ttab\x00" +
		"160000 3333333333333333333333333333333333333333 0\t../outside\x00" +
		"160000 4444444444444444444444444444444444444444 0\t/abs\x00" +
		"160000 5555555555555555555555555555555555555555\tshort\x00"
	assert.Equal(t, []gitlink{{"vendor/lib", strings.Repeat("1", 40)}, {"with\ttab", strings.Repeat("2", 40)}},
		parseGitlinks([]byte(out)))
}

// FuzzParseGitlinks: whatever entries are around it, a gitlink that ls-files prints is
// read back; and every path read stays inside the work tree.
func FuzzParseGitlinks(f *testing.F) {
	f.Add([]byte("100644 3b18e512dba79e4c8300dd08aeb37f8e728b8dad 0\thello.txt\x00"), "vendor/lib", "1111111111111111111111111111111111111111")
	f.Fuzz(func(t *testing.T, around []byte, path, commit string) {
		fuzzguard.Run(len(around)+len(path)+len(commit), func() {
			for _, l := range parseGitlinks(around) {
				assert.False(t, filepath.IsAbs(l.path) || l.path == ".." || strings.HasPrefix(l.path, "../"), "%q", l.path)
			}
			clean := filepath.Clean(path)
			if path == "" || strings.ContainsRune(path, 0) || filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") ||
				commit == "" || strings.ContainsAny(commit, " \t\n\r\v\f\x00\u0085\u00a0") || len(bytes.Fields([]byte(commit))) != 1 {
				return
			}
			doc := append(append([]byte{}, around...), 0)
			doc = append(doc, "160000 "+commit+" 0\t"+path+"\x00"...)
			doc = append(doc, around...)
			assert.Contains(t, parseGitlinks(doc), gitlink{clean, commit}, "%q", doc)
		})
	})
}

package tools

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/agentrun/agentrun/pathname"
	"golang.org/x/sys/unix"
)

// maxIgnoreFile bounds the bytes of one .gitignore file that are read.
const maxIgnoreFile = 1 << 20

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	path    pathname.PathPattern
	negate  bool // "!pattern" re-includes
	dirOnly bool // "pattern/" matches directories only
}

// parseIgnore parses .gitignore text: blank lines and "#" comments are skipped,
// trailing unescaped spaces dropped, "!" negates, a trailing "/" matches directories
// only, a "/" at the start or in the middle anchors the pattern to the file's
// directory (otherwise it matches at any depth), and "**" matches any number of
// directories. Lines with an invalid pattern are skipped, as git does.
func parseIgnore(text string) []ignoreRule {
	var rules []ignoreRule
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
			line = line[:len(line)-1]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		var r ignoreRule
		if line[0] == '!' {
			r.negate = true
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if !strings.Contains(line, "/") {
			line = "**/" + line
		}
		path, err := pathname.CompilePath(line)
		if err != nil || path.Empty() {
			continue
		}
		r.path = path
		rules = append(rules, r)
	}
	return rules
}

// ignoreFile is the rules of one .gitignore and the directory they are relative to.
type ignoreFile struct {
	dir   string
	rules []ignoreRule
}

// match reports whether a path relative to the file's directory is matched, and if
// so whether it is ignored: the last matching rule decides.
func (f *ignoreFile) match(rel string, isDir bool) (matched, ignored bool) {
	parts := strings.Split(rel, "/")
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		if r.path.Match(parts) {
			return true, !r.negate
		}
	}
	return false, false
}

// ignorer is the stack of .gitignore files that apply during a directory walk.
type ignorer struct {
	files []ignoreFile
}

// newIgnorer loads .git/info/exclude and the .gitignore files of the directories
// from the workspace down to root's parent, when root lies in the workspace.
func newIgnorer(workspace, root string) *ignorer {
	ig := &ignorer{}
	if workspace == "" || !pathname.Within(workspace, root) {
		return ig
	}
	ig.load(workspace, filepath.Join(workspace, ".git", "info", "exclude"))
	for dir := workspace; dir != root; {
		ig.load(dir, filepath.Join(dir, ".gitignore"))
		rel, err := filepath.Rel(dir, root)
		if err != nil {
			break
		}
		first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		dir = filepath.Join(dir, first)
	}
	return ig
}

// load adds the rules of one ignore file, if it exists, is a regular file (not a
// link) and is readable.
func (ig *ignorer) load(dir, file string) {
	f, err := openNoMagic(file, readFlags|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	if _, err := checkRegular(f, false); err != nil {
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	if err != nil {
		return
	}
	if rules := parseIgnore(string(data)); len(rules) > 0 {
		ig.files = append(ig.files, ignoreFile{dir: dir, rules: rules})
	}
}

// enter pops the files of directories the walk has left and loads dir's .gitignore.
func (ig *ignorer) enter(dir string) {
	ig.leave(dir)
	ig.load(dir, filepath.Join(dir, ".gitignore"))
}

// leave pops the files whose directory does not contain p.
func (ig *ignorer) leave(p string) {
	for len(ig.files) > 0 && !pathname.Within(ig.files[len(ig.files)-1].dir, p) {
		ig.files = ig.files[:len(ig.files)-1]
	}
}

// ignored reports whether the absolute path p is ignored. Deeper files take
// precedence over shallower ones.
func (ig *ignorer) ignored(p string, isDir bool) bool {
	ignored := false
	for i := range ig.files {
		f := &ig.files[i]
		if p == f.dir || !pathname.Within(f.dir, p) {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, f.dir), "/")
		if m, ign := f.match(filepath.ToSlash(rel), isDir); m {
			ignored = ign
		}
	}
	return ignored
}

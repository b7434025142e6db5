package pathname

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxSymlinks bounds the links Real follows, like the kernel's ELOOP limit.
const maxSymlinks = 40

// Real resolves the symbolic links of an absolute path the way the kernel would
// when opening or creating it: links in the existing part are followed (also dangling
// ones, whose target is where a write would land), and the missing rest is appended
// as written. It never fails; at the link limit it returns the path reached so far.
func Real(p string) string { return RealFrom(p, "") }

// RealFrom is Real for a clean absolute path, trusting base, a directory with
// its symbolic links already resolved: only the components of p below base are looked
// up (a path inside the workspace costs a few lstat calls, not one per directory from
// the root).
func RealFrom(p, base string) string {
	resolved, _ := Walk(p, base, nil)
	return resolved
}

// Walk resolves the clean absolute path p component by component as RealFrom
// documents, calling stop, when set, with each path it is about to look at; when stop
// reports true the walk ends there, and Walk returns that path and true.
func Walk(p, base string, stop func(string) bool) (string, bool) {
	rest := Elements(p)
	resolved := string(filepath.Separator)
	if base != "" && base != "/" && Within(base, p) {
		resolved, rest = base, Elements(strings.TrimPrefix(p, base))
	}
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		if stop != nil && stop(next) {
			return next, true
		}
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, rest...)...), false
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		target, err := os.Readlink(next)
		if err != nil || links > maxSymlinks {
			return filepath.Join(append([]string{next}, rest...)...), false
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		rest = append(Elements(target), rest...)
	}
	return resolved, false
}

// Elements splits a path at its slashes (a leading slash gives a first element "").
func Elements(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// Within reports whether the clean absolute path p is dir or lies below it.
func Within(dir, p string) bool {
	if dir == "" {
		return false
	}
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// HasDotDot reports whether the path has a ".." element.
func HasDotDot(p string) bool {
	for _, c := range Elements(p) {
		if c == ".." {
			return true
		}
	}
	return false
}

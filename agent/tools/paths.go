package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxSymlinks bounds the links realPath follows, like the kernel's ELOOP limit.
const maxSymlinks = 40

// maxOutput returns the byte cap of one result.
func (e *Env) maxOutput() int {
	if e == nil || e.MaxOutput <= 0 {
		return DefaultMaxOutput
	}
	return e.MaxOutput
}

// policy returns the policy; a nil Env denies everything.
func (e *Env) policy() Policy {
	if e == nil {
		return Policy{}
	}
	return e.Policy
}

func (e *Env) workspace() string {
	if e == nil {
		return ""
	}
	return e.Workspace
}

// realWorkspace is the workspace with its symbolic links resolved, looked up once.
func (e *Env) realWorkspace() string {
	if e == nil || e.Workspace == "" {
		return ""
	}
	if e.realWS == "" {
		e.realWS = realPath(e.Workspace)
	}
	return e.realWS
}

func (e *Env) home() string {
	if e == nil {
		return ""
	}
	return e.Home
}

// absPath turns a tool's path argument into a clean absolute path: "~" and "~/…"
// resolve against Home, relative paths against Workspace, and "" is the workspace.
func absPath(env *Env, p string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if h := env.home(); h != "" {
			return filepath.Join(h, p[1:])
		}
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	ws := env.workspace()
	if ws == "" {
		ws = string(filepath.Separator)
	}
	return filepath.Join(ws, p)
}

// realPath resolves the symbolic links of an absolute path the way the kernel would
// when opening or creating it: links in the existing part are followed (also dangling
// ones, whose target is where a write would land), and the missing rest is appended
// as written. It never fails; at the link limit it returns the path reached so far.
func realPath(p string) string { return realPathFrom(p, "") }

// realPathFrom is realPath for a clean absolute path, trusting base, a directory with
// its symbolic links already resolved: only the components of p below base are looked
// up (a path inside the workspace costs a few lstat calls, not one per directory from
// the root).
func realPathFrom(p, base string) string {
	resolved, _ := walkPath(p, base, nil)
	return resolved
}

// walkPath resolves the clean absolute path p component by component as realPathFrom
// documents, calling stop, when set, with each path it is about to look at; when stop
// reports true the walk ends there, and walkPath returns that path and true.
func walkPath(p, base string, stop func(string) bool) (string, bool) {
	rest := splitPath(p)
	resolved := string(filepath.Separator)
	if base != "" && base != "/" && within(base, p) {
		resolved, rest = base, splitPath(strings.TrimPrefix(p, base))
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
		rest = append(splitPath(target), rest...)
	}
	return resolved, false
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// within reports whether the clean absolute path p is dir or lies below it.
func within(dir, p string) bool {
	if dir == "" {
		return false
	}
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// hasDotDot reports whether the path has a ".." element.
func hasDotDot(p string) bool {
	for _, c := range splitPath(p) {
		if c == ".." {
			return true
		}
	}
	return false
}

// displayPath shows an absolute path relative to the workspace when it lies inside.
func displayPath(env *Env, p string) string {
	ws := env.workspace()
	if ws != "" && within(ws, p) {
		if rel, err := filepath.Rel(ws, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return p
}

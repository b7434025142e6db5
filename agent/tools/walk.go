package tools

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrun/agentrun/policy"
	"golang.org/x/sys/unix"
)

// vcsDirs are never walked.
var vcsDirs = []string{".git", ".hg", ".svn", ".jj"}

// walker is the state of one walkFiles call.
type walker struct {
	ctx   context.Context
	env   *Env
	ig    *ignorer
	fn    func(path string, d fs.DirEntry) error
	links int // symbolic links the policy refused
}

// walkFiles calls fn for every entry below root that is not a directory (regular
// files, symbolic links, and so on), in lexical order, skipping version-control
// directories, what the .gitignore files of the workspace ignore, and whatever the
// policy does not allow reading (readRefused): credential stores are pruned, links to
// them skipped. Symbolic links to directories are reported, not followed. Every
// directory is opened without following a link or magic link and checked where it
// really is; unreadable directories are skipped. fn may return fs.SkipAll to stop
// early. It returns the number of symbolic links skipped for the policy.
func walkFiles(ctx context.Context, env *Env, root string, fn func(path string, d fs.DirEntry) error) (int, error) {
	f, err := openNoMagic(root, dirFlags, 0)
	if err != nil {
		return 0, err
	}
	real, err := checkOpened(env, f, root, policy.OpRead)
	if err != nil {
		_ = f.Close()
		return 0, err
	}
	w := &walker{ctx: ctx, env: env, ig: newIgnorer(env.workspace(), root), fn: fn}
	if err := w.dir(root, real, f); err != nil && !errors.Is(err, fs.SkipAll) {
		return w.links, err
	}
	return w.links, nil
}

// dir walks the open directory f, found at p and really at real, and closes it.
func (w *walker) dir(p, real string, f *os.File) error {
	w.ig.enter(p)
	entries, _ := f.ReadDir(-1) // what could be read of an unreadable directory
	_ = f.Close()
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, d := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		cp, creal := filepath.Join(p, d.Name()), filepath.Join(real, d.Name())
		w.ig.leave(p)
		if d.IsDir() {
			if slices.Contains(vcsDirs, d.Name()) || w.ig.ignored(cp, true) || readRefused(w.env, creal) {
				continue
			}
			sub, err := openNoMagic(cp, dirFlags|unix.O_NOFOLLOW, 0)
			if err != nil {
				continue
			}
			subReal, err := checkOpened(w.env, sub, cp, policy.OpRead)
			if err != nil {
				_ = sub.Close()
				continue
			}
			if err := w.dir(cp, subReal, sub); err != nil {
				return err
			}
			continue
		}
		if w.ig.ignored(cp, false) {
			continue
		}
		if readRefused(w.env, creal) {
			if d.Type()&fs.ModeSymlink != 0 {
				w.links++
			}
			continue
		}
		if err := w.fn(cp, d); err != nil {
			return err
		}
	}
	return nil
}

// readRefused reports whether the policy refuses to read the absolute path p: the
// rule of the Read tool, which Glob and Grep apply to every entry they walk.
func readRefused(env *Env, p string) bool {
	return env.policy().CheckPath(policy.OpRead, p, env.dirs()) != nil
}

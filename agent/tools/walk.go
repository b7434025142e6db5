package tools

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
)

// vcsDirs are never walked.
var vcsDirs = []string{".git", ".hg", ".svn", ".jj"}

// walkFiles calls fn for every entry below root that is not a directory (regular
// files, symbolic links, and so on), in lexical order, skipping version-control
// directories and what the .gitignore files of the workspace ignore. Symbolic links
// to directories are reported, not followed. Unreadable directories are skipped.
// fn may return fs.SkipAll to stop early.
func walkFiles(ctx context.Context, env *Env, root string, fn func(path string, d fs.DirEntry) error) error {
	ig := newIgnorer(env.workspace(), root)
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != root {
				if slices.Contains(vcsDirs, d.Name()) {
					return fs.SkipDir
				}
				ig.leave(filepath.Dir(p))
				if ig.ignored(p, true) {
					return fs.SkipDir
				}
			}
			ig.enter(p)
			return nil
		}
		ig.leave(filepath.Dir(p))
		if ig.ignored(p, false) {
			return nil
		}
		return fn(p, d)
	})
}

package runner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrun/agentrun/pathname"
)

// workKeys are the config keys that a repository the tools made keeps (git config
// --list names them so, the section and the name in lower case): what git init writes
// and what a repository made for work needs, none of which runs a program. Every other
// key goes: core.fsmonitor, core.hooksPath, core.pager, an alias, a filter, an include.
var workKeys = map[string]bool{
	"core.repositoryformatversion": true, "core.filemode": true, "core.bare": true, "core.logallrefupdates": true,
	"core.ignorecase": true, "core.precomposeunicode": true, "core.symlinks": true, "core.autocrlf": true,
	"core.eol": true, "core.safecrlf": true, "core.quotepath": true, "core.abbrev": true,
	"core.sparsecheckout": true, "core.sparsecheckoutcone": true,
	"extensions.objectformat": true, "extensions.refstorage": true, "extensions.worktreeconfig": true,
	"user.name": true, "user.email": true, "init.defaultbranch": true, "lfs.repositoryformatversion": true,
}

// workSubKeys are the keys of a section with a subsection (remote "origin", branch
// "main") that such a repository keeps, by their section and name.
var workSubKeys = map[string]bool{
	"remote.url": true, "remote.pushurl": true, "remote.fetch": true,
	"branch.remote": true, "branch.merge": true, "branch.rebase": true,
	"submodule.url": true, "submodule.active": true, "submodule.branch": true,
}

// workKey reports whether a repository the tools made keeps config key.
func workKey(key string) bool {
	if workKeys[key] {
		return true
	}
	section, sub, name := configEntry{key: key}.parts()
	return sub != "" && workSubKeys[section+"."+name]
}

// tameNew takes what git would run out of the git folders that the session's tools made
// in the guard's workspace, at its top and in the work trees up to nestedDepth folders
// inside (not in skip, the output folder): a repository that was not there before the
// session (git init in a copy, which the user inspects, or in a folder of the user's)
// would run its config, hooks and aliases in the user's next git there, as one that was
// would without the guard. Its config keeps workKeys, its hooks folder only git's
// samples; a .git that is a link, or a file naming a folder elsewhere, goes. The rest
// stays: objects, refs, the index, HEAD. It returns what it changed or removed.
func (g *gitGuard) tameNew(ctx context.Context, git gitBin, skip string) ([]string, error) {
	if g.workspace == "" {
		return nil, nil
	}
	var changed []string
	for _, rel := range append([]string{"."}, nestedWorkTrees(g.workspace, skip)...) {
		tree := filepath.Join(g.workspace, rel)
		dotGit := filepath.Join(tree, ".git")
		if g.known(dotGit) || !realPath(tree) {
			continue
		}
		info, err := os.Lstat(dotGit)
		if err != nil {
			continue
		}
		dir := dotGit
		if !info.IsDir() {
			target, terr := gitFileTarget(tree)
			if info.Mode().IsRegular() && terr == nil && pathname.Within(g.workspace, target) && realPath(target) && isDir(target) {
				dir = target // a worktree's or a submodule's of a repository here
			} else {
				if err := os.Remove(dotGit); err != nil {
					return changed, err
				}
				changed = append(changed, dotGit)
				continue
			}
		}
		c, err := tameGitDir(ctx, git, dir)
		changed = append(changed, c...)
		if err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// known reports whether dotGit was there before the session: a git folder or a .git
// file the guard keeps.
func (g *gitGuard) known(dotGit string) bool {
	if _, ok := g.gitFiles[dotGit]; ok {
		return true
	}
	return slices.ContainsFunc(g.folders, func(f guardedFolder) bool { return f.path == dotGit })
}

// tameGitDir takes what git would run out of the git folder dir and out of those of its
// submodules and worktrees under modules/ and worktrees/.
func tameGitDir(ctx context.Context, git gitBin, dir string) ([]string, error) {
	var changed []string
	for _, name := range []string{"config", "config.worktree"} {
		c, err := tameConfig(ctx, git, filepath.Join(dir, name))
		changed = append(changed, c...)
		if err != nil {
			return changed, err
		}
	}
	if p := filepath.Join(dir, "commondir"); exists(p) {
		if err := os.RemoveAll(p); err != nil {
			return changed, err
		}
		changed = append(changed, p)
	}
	hooks := filepath.Join(dir, "hooks")
	if info, err := os.Lstat(hooks); err == nil && !info.IsDir() {
		if err := os.Remove(hooks); err != nil {
			return changed, err
		}
		changed = append(changed, hooks)
	} else if entries, err := os.ReadDir(hooks); err == nil {
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".sample") {
				continue
			}
			p := filepath.Join(hooks, e.Name())
			if err := os.RemoveAll(p); err != nil {
				return changed, err
			}
			changed = append(changed, p)
		}
	}
	for _, sub := range []string{"modules", "worktrees"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			// A submodule's name may hold folders: modules/vendor/lib.
			root := filepath.Join(dir, sub, e.Name())
			werr := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.IsDir() {
					return err
				}
				if unguarded[d.Name()] || d.Name() == "hooks" || d.Name() == "info" {
					return filepath.SkipDir
				}
				if !exists(filepath.Join(p, "HEAD")) {
					return nil
				}
				c, err := tameGitDir(ctx, git, p)
				changed = append(changed, c...)
				if err != nil {
					return err
				}
				return filepath.SkipDir
			})
			if werr != nil {
				return changed, werr
			}
		}
	}
	return changed, nil
}

// tameConfig takes every key but workKeys out of the config file f of a repository the
// tools made; a config that is no file (a link), or that git cannot rewrite, goes whole.
func tameConfig(ctx context.Context, git gitBin, f string) ([]string, error) {
	info, err := os.Lstat(f)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if info.Mode().IsRegular() {
		entries, err := git.listConfig(ctx, f)
		var bad []string
		for _, e := range entries {
			if !workKey(e.key) && !slices.Contains(bad, e.key) {
				bad = append(bad, e.key)
			}
		}
		if err == nil && len(bad) == 0 {
			return nil, nil
		}
		for _, key := range bad {
			if err != nil {
				break
			}
			err = git.unsetKey(ctx, f, key)
		}
		if err == nil {
			return []string{f}, nil
		}
	}
	if err := os.Remove(f); err != nil {
		return nil, err
	}
	return []string{f}, nil
}

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/pathname"
	"github.com/agentrun/agentrun/protocol"
)

// gitGuard keeps, of the git folders in a folder that the tools may write (a shared
// workspace, the user's checkout; a copy, which the user inspects; a writable path),
// what makes the git of whoever works there next run a program: the config (core.fsmonitor, core.hooksPath,
// aliases, filters, core.sshCommand, …), the hooks, the info folder (attributes that
// apply a filter, excludes that keep a file from git status), commondir (which names
// another folder's config), and the same of the submodules' and worktrees' git
// folders. The next is the user, or CI's next step, unconfined and with the job's
// secrets; and no diff the user reviews shows a git folder. The guard saves them
// before the session's tools run, and puts them back once its tools have ended.
type gitGuard struct {
	// workspace is the folder whose new git folders tameNew tames; "" for the guard
	// of a git folder alone (folderGuard).
	workspace string
	folders   []guardedFolder
	// gitFiles are the .git files of the work trees whose git folder is elsewhere (a
	// worktree's, a submodule's), by path: one the tools pointed at a repository of
	// theirs would make the next git, a check's among them, read that one.
	gitFiles map[string]guardedFile
}

// guardedFolder is one git folder, and what the guard keeps of it by its path in it.
type guardedFolder struct {
	path  string
	files map[string]guardedFile
}

// guardedFile is a kept file, link or folder: its type and permissions, and a file's
// content or a link's target; unread is a file whose content was not read, since it
// cannot be the one saved.
type guardedFile struct {
	mode   fs.FileMode
	data   []byte
	unread bool
}

// errGitFolderReplaced is a git folder that the tools replaced by a link or a file,
// which may name any folder: the guard cannot put it back.
var errGitFolderReplaced = errors.New("the session's tools replaced the git folder by a link or a file, which agentrun cannot put back: look at it before you run git there")

// guardedTop are the entries of a git folder that the guard keeps (the folders among
// them whole, but for unguarded); a submodule's or a worktree's git folder, under
// modules/ and worktrees/, is kept by guardedPath.
var guardedTop = map[string]bool{"config": true, "config.worktree": true, "commondir": true, "hooks": true,
	"info": true, "modules": true, "worktrees": true}

// unguarded are the folders of a repository's data, which git never runs: a
// submodule's objects, refs and logs under modules/.
var unguarded = map[string]bool{"objects": true, "refs": true, "logs": true, "lfs": true}

// guardedPath reports whether the guard keeps rel, a path in a git folder.
func guardedPath(rel string) bool {
	parts := strings.Split(rel, "/")
	if !guardedTop[parts[0]] {
		return false
	}
	if slices.ContainsFunc(parts[1:], func(p string) bool { return unguarded[p] }) {
		return false
	}
	if parts[0] != "modules" && parts[0] != "worktrees" || len(parts) == 1 {
		return true
	}
	switch parts[len(parts)-1] {
	case "config", "config.worktree", "commondir":
		return true
	}
	// parts[1] names the submodule or the worktree.
	return slices.Contains(parts[2:], "hooks") || slices.Contains(parts[2:], "info")
}

// newGitGuard saves what the guard keeps of the git folders of the repository whose
// work tree is workspace and of those checked out inside it, whose work trees are
// trees (paths in workspace), where they lie in workspace.
func newGitGuard(workspace string, trees []string) (*gitGuard, error) {
	g := &gitGuard{workspace: workspace, gitFiles: map[string]guardedFile{}}
	for _, rel := range append([]string{"."}, trees...) {
		tree := filepath.Join(workspace, rel)
		dir := filepath.Join(tree, ".git")
		info, err := os.Lstat(dir)
		if err != nil {
			continue
		}
		if !info.IsDir() {
			if !info.Mode().IsRegular() || !realPath(tree) {
				continue
			}
			b, err := readUpTo(dir, 1<<16)
			if err != nil {
				return nil, fmt.Errorf("git file %s: %w", dir, err)
			}
			g.gitFiles[dir] = guardedFile{mode: info.Mode() & (fs.ModeType | fs.ModePerm), data: b}
			// A submodule's or a worktree's: its git folder is elsewhere, under the
			// modules/ or worktrees/ of one kept here, or out of the tools' hands.
			if dir, err = gitFileTarget(tree); err != nil || !pathname.Within(workspace, dir) {
				continue
			}
		}
		if !realPath(dir) || slices.ContainsFunc(g.folders, func(f guardedFolder) bool { return pathname.Within(f.path, dir) }) {
			continue
		}
		f, err := guardFolder(dir)
		if err != nil {
			return nil, err
		}
		g.folders = append(g.folders, f)
	}
	return g, nil
}

// guardFolder saves what the guard keeps of the git folder dir.
func guardFolder(dir string) (guardedFolder, error) {
	files, err := scanGuarded(dir, nil)
	if err != nil {
		return guardedFolder{}, fmt.Errorf("git folder %s: %w", dir, err)
	}
	return guardedFolder{path: dir, files: files}, nil
}

// sharedGuard is the guard of dir, a shared workspace or a writable path, made once per
// run, before the first session's tools run: the sessions that share it run at once,
// and each one's end puts back what was there before any of them. trees gives the work
// trees inside it (newGitGuard), once.
func (st *runState) sharedGuard(dir string, trees func() []string) (*gitGuard, error) {
	return st.guards.get(dir, func() (*gitGuard, error) { return newGitGuard(dir, trees()) })
}

// folderGuard is the guard of the git folder dir itself, made once per run, before the
// first session's tools run: the common git folder of a shared workspace whose .git file
// names one outside it (a linked worktree's, a submodule's), which its tools write as
// they write a checkout's own.
func (st *runState) folderGuard(dir string) (*gitGuard, error) {
	return st.guards.get(dir, func() (*gitGuard, error) {
		f, err := guardFolder(dir)
		if err != nil {
			return nil, err
		}
		return &gitGuard{folders: []guardedFolder{f}, gitFiles: map[string]guardedFile{}}, nil
	})
}

// violationGitFolder is the kind of the sandbox_violation of a path in a workspace's
// git folder that the session's tools changed and the guard put back.
const violationGitFolder = "git_folder"

// restoreGit puts back what the tools of session s changed in its workspace's git
// folders (gitGuard), once they have all ended: before the session's checks, which
// judge the workspace with git, and when its worker has closed. Each path put back is
// a warning in the log and a sandbox_violation in the session's streams. A git folder that cannot be
// put back ends the session error_sandbox, which fails the run, so that CI's next step,
// which would run git there, does not run.
func (st *runState) restoreGit(arts *artifacts, s jobs.Session, ws *workspace, res *protocol.Result) {
	if ws == nil {
		return
	}
	var changed, tamed []string
	var err error
	for _, g := range ws.guards {
		c, gerr := g.restore()
		changed, err = append(changed, c...), errors.Join(err, gerr)
		// The workspace's own guard: a writable path (a build cache) would cost a walk
		// of its folders at each session's end.
		if gerr == nil && g.workspace == ws.root {
			c, gerr = g.tameNew(context.Background(), st.git, st.outDir)
			tamed, err = append(tamed, c...), errors.Join(err, gerr)
		}
	}
	report := func(paths []string, msg string) {
		for _, path := range paths {
			if rel, rerr := filepath.Rel(ws.root, path); rerr == nil && pathname.Within(ws.root, path) {
				path = rel // the workspace's own, named as in its tools' commands
			}
			// A name the tools gave may hold a secret of the session's: masked.
			st.r.log.Warn(msg, zapKey(s.Key), zap.String("path", arts.redactor.String(path)))
			v := &protocol.Violation{Kind: violationGitFolder, Target: path}
			if err := arts.Write(protocol.Message{Kind: protocol.KindSandboxViolation, Violation: v}); err != nil {
				st.r.log.Warn("write sandbox_violation", zapKey(s.Key), zapErr(err))
			}
		}
	}
	report(changed, "the session's tools changed its workspace's git folder, which git would run in the next git command there: agentrun put it back")
	report(tamed, "the session's tools made a git folder in its workspace with what git would run in the next git command there: agentrun took that out")
	if err != nil {
		st.r.log.Error("the session's workspace's git folder", zapKey(s.Key), zapErr(err))
		res.Status = protocol.StatusSandbox
		res.Error = &protocol.Error{Kind: protocol.ErrSandbox, Message: "workspace: " + err.Error()}
	}
}

// scanGuarded reads what the guard keeps of the git folder dir, links not followed.
// With saved, a file's content is read only where it may equal the saved one's (the
// same type and size): a file the tools made may be of any size.
func scanGuarded(dir string, saved map[string]guardedFile) (map[string]guardedFile, error) {
	files := map[string]guardedFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p == dir || err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() && (!guardedTop[strings.Split(rel, "/")[0]] || unguarded[d.Name()]) {
			return filepath.SkipDir
		}
		if !guardedPath(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f := guardedFile{mode: info.Mode() & (fs.ModeType | fs.ModePerm)}
		was, ok := saved[rel]
		switch {
		case f.mode&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			f.data = []byte(link)
		case !f.mode.IsRegular():
		case saved == nil || ok && was.mode == f.mode && int64(len(was.data)) == info.Size():
			if f.data, err = readUpTo(p, info.Size()); err != nil {
				return err
			}
		default:
			f.unread = true
		}
		files[rel] = f
		return nil
	})
	return files, err
}

// readUpTo reads the file p, of at most n bytes.
func readUpTo(p string, n int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return io.ReadAll(io.LimitReader(f, n))
}

// restore puts back what the guard keeps, once no tool of the session runs any more,
// and returns what it put back (the topmost of each change). A git folder the tools removed runs nothing; one they replaced by a link
// or a file ends in errGitFolderReplaced.
func (g *gitGuard) restore() ([]string, error) {
	var changed, replaced []string
	for _, f := range g.folders {
		info, err := os.Lstat(f.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return changed, fmt.Errorf("git folder %s: %w", f.path, err)
		case !info.IsDir() || !realPath(f.path):
			// Or a folder on its way: what the runner would write there, unconfined,
			// would go wherever the link leads.
			replaced = append(replaced, f.path)
			continue
		}
		c, err := f.restore()
		for _, rel := range c {
			changed = append(changed, filepath.Join(f.path, rel))
		}
		if err != nil {
			return changed, fmt.Errorf("git folder %s: %w", f.path, err)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(g.gitFiles)) {
		tree := filepath.Dir(p)
		if _, err := os.Lstat(tree); errors.Is(err, fs.ErrNotExist) {
			continue // a worktree removed after its session, or a folder the tools removed
		}
		if !realPath(tree) {
			replaced = append(replaced, p)
			continue
		}
		was := g.gitFiles[p]
		if info, err := os.Lstat(p); err == nil && info.Mode()&(fs.ModeType|fs.ModePerm) == was.mode && info.Size() == int64(len(was.data)) {
			if b, err := readUpTo(p, info.Size()); err == nil && bytes.Equal(b, was.data) {
				continue
			}
		}
		changed = append(changed, p)
		if err := writeGuarded(p, was); err != nil {
			return changed, fmt.Errorf("git file %s: %w", p, err)
		}
	}
	if len(replaced) > 0 {
		return changed, fmt.Errorf("%w (%s)", errGitFolderReplaced, strings.Join(replaced, ", "))
	}
	return changed, nil
}

// restore puts back what f keeps: what the tools added, or changed the type of, goes
// first, shallowest first (a link goes as a link: nothing behind it is touched), then
// what is missing or differs is written again, folders before what they hold.
func (f guardedFolder) restore() ([]string, error) {
	now, err := scanGuarded(f.path, f.files)
	if err != nil {
		return nil, err
	}
	var changed []string
	note := func(rel string) {
		if !slices.ContainsFunc(changed, func(c string) bool { return pathname.Within(c, rel) }) {
			changed = append(changed, rel)
		}
	}
	for _, rel := range shallowFirst(now) {
		if was, ok := f.files[rel]; ok && was.mode.Type() == now[rel].mode.Type() {
			continue
		}
		note(rel)
		if err := os.RemoveAll(filepath.Join(f.path, rel)); err != nil {
			return changed, err
		}
	}
	for _, rel := range shallowFirst(f.files) {
		was, cur := f.files[rel], now[rel]
		p := filepath.Join(f.path, rel)
		if _, err := os.Lstat(p); err == nil && cur.mode == was.mode && !cur.unread && bytes.Equal(cur.data, was.data) {
			continue
		}
		note(rel)
		if err := writeGuarded(p, was); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// writeGuarded writes the kept file f at p, in place of whatever is there: a folder is
// made (or given its permissions), a link made again, a file written beside and
// renamed over.
func writeGuarded(p string, f guardedFile) error {
	switch {
	case f.mode.IsDir():
		if err := os.Mkdir(p, f.mode.Perm()); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return os.Chmod(p, f.mode.Perm())
	case f.mode&fs.ModeSymlink != 0:
		if err := os.RemoveAll(p); err != nil {
			return err
		}
		return os.Symlink(string(f.data), p)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".agentrun-restore-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(f.data)
	if err == nil {
		err = tmp.Chmod(f.mode.Perm())
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = os.RemoveAll(p); err == nil {
			err = os.Rename(tmp.Name(), p)
		}
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// realPath reports whether no folder on the way to p, nor p, is a link.
func realPath(p string) bool {
	r, err := filepath.EvalSymlinks(p)
	return err == nil && r == p
}

// shallowFirst are the paths of files, those of fewer folders first.
func shallowFirst(files map[string]guardedFile) []string {
	out := make([]string, 0, len(files))
	for rel := range files {
		out = append(out, rel)
	}
	slices.SortFunc(out, func(a, b string) int {
		if d := strings.Count(a, "/") - strings.Count(b, "/"); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return out
}

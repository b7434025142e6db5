package jobs

import (
	"fmt"
	"os"
	"slices"
)

// CheckWorkspaces checks, before anything runs, that the workspace of every session can
// be made: its folder exists and is a folder, and for mode worktree repo(dir) returns
// nil (it says why dir is no git repository to take a worktree of; nil repo skips that
// check). Each problem names the field that set the folder or the mode (a matrix value,
// the job, or the defaults) and is reported once, however many sessions share it.
func (s *Spec) CheckWorkspaces(sessions []Session, repo func(dir string) error) error {
	ps := &problems{file: s.file}
	folders := map[string]string{} // folder → why it is unusable, "" when it is usable
	repos := map[string]string{}
	reported := map[string]bool{}
	report := func(path, msg string) {
		if !reported[path+"\x00"+msg] {
			reported[path+"\x00"+msg] = true
			ps.add(s.at(path), path, "%s", msg)
		}
	}
	for _, se := range sessions {
		w := se.Settings.Workspace
		msg, seen := folders[w.Dir]
		if !seen {
			msg = folderProblem(w.Dir)
			folders[w.Dir] = msg
		}
		if msg != "" {
			report(s.origin(se, "workspace", "dir"), "workspace "+msg)
			continue
		}
		if w.Mode != WorkspaceWorktree || repo == nil {
			continue
		}
		msg, seen = repos[w.Dir]
		if !seen {
			if err := repo(w.Dir); err != nil {
				msg = err.Error()
			}
			repos[w.Dir] = msg
		}
		if msg != "" {
			report(s.origin(se, "workspace", "mode"), "mode worktree takes a git worktree of the workspace folder, and "+msg)
		}
	}
	return ps.err()
}

// folderProblem returns "" when dir is a folder, else why it is not.
func folderProblem(dir string) string {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Sprintf("%s: %v", dir, unwrapPathError(err))
	case !fi.IsDir():
		return fmt.Sprintf("%s is not a directory", dir)
	}
	return ""
}

// origin returns the field path that decides the nested setting group.key of session
// se: its matrix value, else the job's setting, else the defaults', else the job itself
// (the built-in default).
func (s *Spec) origin(se Session, group, key string) string {
	jp := fmt.Sprintf("jobs[%d]", se.job)
	name := group + "." + key
	if v, ok := se.Matrix[name]; ok && se.job < len(s.Jobs) {
		if k := slices.Index(s.Jobs[se.job].Matrix[name], v); k >= 0 {
			return fmt.Sprintf("%s.matrix.%s[%d]", jp, name, k)
		}
	}
	for _, p := range []string{jp + "." + name, "defaults." + name} {
		if _, set := s.pos[p]; set {
			return p
		}
	}
	return jp
}

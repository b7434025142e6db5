package policy

import "github.com/agentrun/agentrun/pathname"

// Dirs are the directories a call's paths are judged against. The policy reads them
// and nothing else of the session; the zero Dirs judges relative paths as in the
// workspace and "~" as external.
type Dirs struct {
	// Workspace is the session's working directory, absolute and clean.
	Workspace string
	// Home is the user's home directory, for "~".
	Home string
	// RealWorkspace is Workspace with its symbolic links resolved, as NewDirs looks it
	// up; when "" every check resolves it again.
	RealWorkspace string
}

// NewDirs returns the Dirs of a workspace and home directory, with the workspace's
// symbolic links resolved once.
func NewDirs(workspace, home string) Dirs {
	d := Dirs{Workspace: workspace, Home: home}
	if workspace != "" {
		d.RealWorkspace = pathname.Real(workspace)
	}
	return d
}

// realWorkspace is the workspace with its symbolic links resolved.
func (d Dirs) realWorkspace() string {
	switch {
	case d.Workspace == "":
		return ""
	case d.RealWorkspace != "":
		return d.RealWorkspace
	}
	return pathname.Real(d.Workspace)
}

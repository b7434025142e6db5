package tools

import (
	"path/filepath"
	"strings"

	"github.com/agentrun/agentrun/pathname"
	"github.com/agentrun/agentrun/policy"
)

// maxOutput returns the byte cap of one result.
func (e *Env) maxOutput() int {
	if e == nil || e.MaxOutput <= 0 {
		return DefaultMaxOutput
	}
	return e.MaxOutput
}

// policy returns the policy; a nil Env denies everything.
func (e *Env) policy() policy.Policy {
	if e == nil {
		return policy.Policy{}
	}
	return e.Policy
}

func (e *Env) workspace() string {
	if e == nil {
		return ""
	}
	return e.Workspace
}

// dirs returns the directories the policy judges paths against; a nil Env has none.
func (e *Env) dirs() policy.Dirs {
	if e == nil {
		return policy.Dirs{}
	}
	return policy.Dirs{Workspace: e.Workspace, Home: e.Home, RealWorkspace: e.realWorkspace()}
}

// realWorkspace is the workspace with its symbolic links resolved, looked up once.
func (e *Env) realWorkspace() string {
	if e == nil || e.Workspace == "" {
		return ""
	}
	if e.realWS == "" {
		e.realWS = pathname.Real(e.Workspace)
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

// displayPath shows an absolute path relative to the workspace when it lies inside.
func displayPath(env *Env, p string) string {
	ws := env.workspace()
	if ws != "" && pathname.Within(ws, p) {
		if rel, err := filepath.Rel(ws, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return p
}

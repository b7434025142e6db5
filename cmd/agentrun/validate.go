package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/transport/scripted"
)

func (a *App) cmdValidate(ctx context.Context, args []string) error {
	fs := newFlags("validate")
	quiet := fs.Bool("quiet", false, "print nothing when the spec is valid")
	pos, err := a.parse(fs, "agentrun validate JOBS.yaml...", "  agentrun validate examples/*.yaml", args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("validate: want at least one job spec file")
	}
	var failed error
	for _, path := range pos {
		spec, err := jobs.Load(path, a.lookupEnv)
		if err == nil {
			var sessions []jobs.Session
			sessions, err = spec.Sessions()
			if err == nil {
				_, err = loadScripts(sessions)
			}
			if err == nil {
				err = runner.CheckWorkspaces(ctx, spec, sessions)
			}
			if err == nil && !*quiet {
				_, _ = fmt.Fprintf(a.Stdout, "%s: valid, %d jobs, %d sessions\n", path, len(spec.Jobs), len(sessions))
				for _, s := range sessions {
					_, _ = fmt.Fprintf(a.Stdout, "  %s\n", s.Key)
				}
			}
		}
		if err != nil {
			_, _ = fmt.Fprintf(a.Stderr, "%v\n", err)
			failed = exitError{code: exitUsage}
		}
	}
	return failed
}

// loadScripts parses every scripted-model script the sessions name, once each, and
// returns them by path.
func loadScripts(sessions []jobs.Session) (map[string]*scripted.Script, error) {
	scripts := map[string]*scripted.Script{}
	var errs []error
	for _, s := range sessions {
		path := s.Settings.Script
		if _, seen := scripts[path]; path == "" || seen {
			continue
		}
		sc, err := scripted.LoadScript(path)
		if err != nil {
			errs = append(errs, err)
		}
		scripts[path] = sc
	}
	return scripts, errors.Join(errs...)
}

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentrun/agentrun/runner"
)

func (a *App) cmdMerge(_ context.Context, args []string) error {
	fs := newFlags("merge")
	out := fs.String("out", "", "folder for the merged summary.json, summary.md and junit.xml (required)")
	pos, err := a.parse(fs, "agentrun merge --out DIR SHARD_DIR...",
		"  agentrun merge --out merged shard-0 shard-1 shard-2 shard-3\n  agentrun merge --out merged results-shard-*", args)
	if err != nil {
		return err
	}
	if *out == "" || len(pos) == 0 {
		return usagef("merge: want --out DIR and at least one shard folder")
	}
	sum, err := runner.Merge(*out, pos)
	if errors.Is(err, runner.ErrMergeInputs) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	_, _ = fmt.Fprint(a.Stdout, sum.Text())
	if cfg, cerr := a.config(); cerr == nil && cfg.GitHubActions {
		if gh := runner.GitHubFromEnv(a.getenv, a.Stdout); gh != nil {
			if err := gh.Report(sum, *out); err != nil {
				return err
			}
		}
	}
	return exitError{code: sum.ExitCode(false)}
}

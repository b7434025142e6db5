package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/agentrun/agentrun/runner"
)

func (a *App) cmdReport(_ context.Context, args []string) error {
	fs := newFlags("report")
	pos, err := a.parse(fs, "agentrun report DIR",
		"  agentrun report out        # rewrite out/report.html\n  agentrun report merged     # the output of agentrun merge: details from the shards' folders", args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("report: want one output folder (of agentrun run or merge), got %d arguments", len(pos))
	}
	sum, err := runner.Report(pos[0])
	if errors.Is(err, runner.ErrNoSummary) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(a.Stdout, "%s: %s\n", filepath.Join(pos[0], runner.ReportFile), sum.Headline())
	return nil
}

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

func (a *App) cmdReplay(_ context.Context, args []string) error {
	fs := newFlags("replay")
	format := fs.String("output-format", "human", "human (text), stream-json, claude (Claude Code's stream-json) or resp")
	pos, err := a.parse(fs, "agentrun replay EVENTS.jsonl [--output-format human|stream-json|claude|resp]",
		"  agentrun replay out/sessions/fix-vet/events.jsonl\n  agentrun replay --output-format claude out/sessions/fix-vet/events.jsonl > execution.jsonl\n  agentrun replay ~/.agentrun/projects/-work-app/20260506-123456-1a2b/events.jsonl", args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("replay: want one events.jsonl file")
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return usageError{err}
	}
	defer func() { _ = f.Close() }()
	outFormat, err := sink.ParseFormat(*format)
	if err != nil {
		return usagef("replay: --output-format %w", err)
	}
	out, err := a.formatSink(outFormat)
	if err != nil {
		return err
	}
	r := protocol.NewEventReader(f)
	events := 0
	for r.Next() {
		events++
		if err := out.Write(r.Message()); err != nil {
			return err
		}
	}
	cerr := out.Close()
	// A file that is not an event log (summary.json, result.json) is a usage error.
	if err := r.Err(); err != nil {
		return usageError{fmt.Errorf("replay %s: not an events.jsonl file: %w", pos[0], err)}
	}
	if events == 0 {
		return usagef("replay %s: no events: want a session's events.jsonl, such as out/sessions/KEY/events.jsonl", pos[0])
	}
	return cerr
}

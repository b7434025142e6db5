package main

import (
	"context"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol/eventschema"
)

func (a *App) cmdSchema(_ context.Context, args []string) error {
	fs := newFlags("schema")
	events := fs.Bool("events", false, "print the JSON Schema of the event lines (stream.jsonl, events.jsonl, stream-json) instead")
	pos, err := a.parse(fs, "agentrun schema [--events] > agentrun.schema.json",
		"  agentrun schema > .agentrun.schema.json   # then point yaml-language-server at it\n  agentrun schema --events > events.schema.json", args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("schema: unexpected argument %q", pos[0])
	}
	if *events {
		_, err = a.Stdout.Write(eventschema.Schema())
		return err
	}
	_, err = a.Stdout.Write(append(jobs.Schema(), '\n'))
	return err
}

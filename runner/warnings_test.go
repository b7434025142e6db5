package runner_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
)

// TestSummaryWarnings checks that the run's warnings reach summary.json, summary.md as
// banners above the table, and GitHub Actions as warnings, each once and in order,
// with the note on unconfined sessions among them; in markdown they hold no HTML.
func TestSummaryWarnings(t *testing.T) {
	t.Parallel()
	spec := loadBatch(t, `version: 1
defaults: {tools: [], sandbox: {level: "off"}}
jobs:
  - {id: a, prompt: Say hi., repeat: 2}
`)
	out := filepath.Join(t.TempDir(), "out")
	var log bytes.Buffer
	stepSummary := filepath.Join(t.TempDir(), "step-summary.md")
	sum := runDemo(t, spec, out, func(o *runner.Options) {
		o.Warnings = []string{"No real model ran.", "", "No real model ran.", "Second <warning> | here."}
		o.GitHub = &runner.GitHub{Log: &log, StepSummary: stepSummary}
	})
	want := []string{"No real model ran.", "Second <warning> | here.",
		"Sandbox off: 2 sessions ran their tools without kernel confinement (sandbox.level: off)."}
	assert.Equal(t, want, sum.Warnings)

	var onDisk runner.Summary
	readJSON(t, filepath.Join(out, runner.SummaryFile), &onDisk)
	assert.Equal(t, want, onDisk.Warnings)

	md, err := os.ReadFile(filepath.Join(out, runner.SummaryMDFile))
	require.NoError(t, err)
	head, _, ok := strings.Cut(string(md), "| Session |")
	require.True(t, ok, string(md))
	heading, banners, _ := strings.Cut(head, "\n\n")
	assert.True(t, strings.HasPrefix(heading, "## agentrun: "), heading)
	assert.Equal(t, "> **⚠ No real model ran.**\n\n> **⚠ Second &lt;warning&gt; | here.**\n\n> **⚠ "+want[2]+"**\n\n", banners,
		"the banners come first after the heading")

	assert.Equal(t, "::warning title=agentrun%3A warning::No real model ran.\n"+
		"::warning title=agentrun%3A warning::Second <warning> | here.\n"+
		"::warning title=agentrun%3A warning::"+want[2]+"\n", grepLines(log.String(), "::warning "))
	step, err := os.ReadFile(stepSummary)
	require.NoError(t, err)
	assert.Contains(t, string(step), "> **⚠ No real model ran.**")
}

// TestMergeWarnings checks that a merged summary keeps every shard's warnings once and
// counts the unconfined sessions of the whole run.
func TestMergeWarnings(t *testing.T) {
	t.Parallel()
	const spec = `version: 1
defaults: {tools: [], sandbox: {level: "off"}}
jobs:
  - {id: a, prompt: Say hi., repeat: 4}
`
	dirs := runDemoShards(t, spec, 2, nil)
	extra := [][]string{{"Only in shard 0."}, {"Only in shard 1."}}
	for i := range dirs {
		require.NoError(t, os.RemoveAll(dirs[i]))
		runDemo(t, loadBatch(t, spec), dirs[i], func(o *runner.Options) {
			o.Shard = runner.Shard{Index: i, Total: 2}
			o.Warnings = append([]string{"In every shard."}, extra[i]...)
		})
	}
	merged, err := runner.Merge(filepath.Join(t.TempDir(), "merged"), dirs)
	require.NoError(t, err)
	assert.Equal(t, []string{"In every shard.", "Only in shard 0.", "Only in shard 1.",
		"Sandbox off: 4 sessions ran their tools without kernel confinement (sandbox.level: off)."}, merged.Warnings)
}

// grepLines returns the lines of s that start with prefix.
func grepLines(s, prefix string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(line, prefix) {
			b.WriteString(line)
		}
	}
	return b.String()
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
)

// detailBlocks counts the sessions whose details a report.html embeds.
var detailBlocks = regexp.MustCompile(`<script type="application/octet-stream" id="d\d+">`)

// TestReportCommand runs a spec as two shards with the binary, merges them, and
// rewrites the report of a shard and of the merged folder with agentrun report: each
// embeds every session, and the merged summary names where the sessions' folders are
// (runner's TestReportMerged reads the details).
func TestReportCommand(t *testing.T) {
	t.Parallel()
	spec := specDir(t, smallSpec("grep -q hello note.txt"))
	base := filepath.Dir(spec)
	var shards []string
	for _, sh := range []string{"0/2", "1/2"} {
		out := filepath.Join(base, "shard-"+sh[:1])
		o := agentrun(t, invocation{args: []string{"run", spec, "--out", out, "--shard", sh}})
		require.Equal(t, 0, o.code, o.stderr)
		assert.FileExists(t, filepath.Join(out, runner.ReportFile), "a run writes its report")
		shards = append(shards, out)
	}
	merged := filepath.Join(base, "merged")
	o := agentrun(t, invocation{args: append([]string{"merge", "--out", merged}, shards...)})
	require.Equal(t, 0, o.code, o.stderr)

	var sum runner.Summary
	b, err := os.ReadFile(filepath.Join(merged, runner.SummaryFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	require.Len(t, sum.Sessions, 3)
	for _, r := range sum.Sessions {
		assert.Regexp(t, `^\.\./shard-[01]/sessions/`+regexp.QuoteMeta(r.Key)+`$`, r.SessionDir)
		assert.DirExists(t, filepath.Join(merged, filepath.FromSlash(r.SessionDir)))
	}

	for name, dir := range map[string]string{"shard": shards[1], "merged": merged} {
		t.Run(name, func(t *testing.T) {
			report := filepath.Join(dir, runner.ReportFile)
			require.NoError(t, os.Remove(report))
			o := agentrun(t, invocation{args: []string{"report", dir}})
			require.Equal(t, 0, o.code, o.stderr)
			assert.Contains(t, o.stdout, report+": ")
			assert.Contains(t, o.stdout, "passed")
			page, err := os.ReadFile(report)
			require.NoError(t, err)
			var want runner.Summary
			b, err := os.ReadFile(filepath.Join(dir, runner.SummaryFile))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &want))
			assert.Len(t, detailBlocks.FindAll(page, -1), len(want.Sessions))
		})
	}
}

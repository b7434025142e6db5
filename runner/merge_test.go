package runner_test

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
)

// runDemoShards runs every shard of spec text split total ways, each into its own folder.
func runDemoShards(t *testing.T, specText string, total int, change func(*runner.Options)) []string {
	t.Helper()
	spec := loadBatch(t, specText)
	var dirs []string
	for i := range total {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("shard-%d", i))
		runDemo(t, spec, dir, func(o *runner.Options) {
			o.Shard = runner.Shard{Index: i, Total: total}
			if change != nil {
				change(o)
			}
		})
		dirs = append(dirs, dir)
	}
	return dirs
}

// statusByKey maps each session of a summary to its status.
func statusByKey(sum *runner.Summary) map[string]protocol.Status {
	out := map[string]protocol.Status{}
	for _, r := range sum.Sessions {
		out[r.Key] = r.Status
	}
	return out
}

// mergedJUnit is the part of junit.xml the merge test reads.
type mergedJUnit struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name      string    `xml:"name,attr"`
			Failure   *struct{} `xml:"failure"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestMergeEqualsUnsharded is the acceptance test of sharding: four shards of a spec,
// merged, give the unsharded run's summary — the same sessions with the same statusByKey
// and the same totals — and the merged junit.xml and summary.md cover every session.
func TestMergeEqualsUnsharded(t *testing.T) {
	t.Parallel()
	spec := loadBatch(t, shardBatchSpec)
	whole := runDemo(t, spec, t.TempDir(), nil)
	require.Len(t, whole.Sessions, 13)
	require.Equal(t, protocol.StatusChecks, statusByKey(whole)["broken"], "the spec must hold a failing session")
	require.Equal(t, 12, whole.Totals.Passed)

	shards := runDemoShards(t, shardBatchSpec, 4, nil)
	out := filepath.Join(t.TempDir(), "merged")
	// The order of the folders does not matter.
	merged, err := runner.Merge(out, []string{shards[2], shards[0], shards[3], shards[1]})
	require.NoError(t, err)

	assert.Equal(t, statusByKey(whole), statusByKey(merged))
	var wholeKeys, mergedKeys []string
	for i := range whole.Sessions {
		wholeKeys = append(wholeKeys, whole.Sessions[i].Key)
	}
	for i := range merged.Sessions {
		mergedKeys = append(mergedKeys, merged.Sessions[i].Key)
	}
	assert.Equal(t, wholeKeys, mergedKeys, "same sessions in the same order")
	assert.Equal(t, whole.Totals.Sessions, merged.Totals.Sessions)
	assert.Equal(t, whole.Totals.Passed, merged.Totals.Passed)
	assert.Equal(t, whole.Totals.Failed, merged.Totals.Failed)
	assert.Equal(t, whole.Totals.ByStatus, merged.Totals.ByStatus)
	assert.Equal(t, whole.ExitCode(false), merged.ExitCode(false))
	assert.Equal(t, whole.SpecDigest, merged.SpecDigest)
	assert.Equal(t, whole.SessionsDigest, merged.SessionsDigest)
	assert.Equal(t, []string{"0/4", "1/4", "2/4", "3/4"}, merged.Shards)

	var onDisk runner.Summary
	b, err := os.ReadFile(filepath.Join(out, runner.SummaryFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &onDisk))
	assert.Equal(t, statusByKey(whole), statusByKey(&onDisk))
	assert.Equal(t, merged.Totals.Passed, onDisk.Totals.Passed)

	var junit mergedJUnit
	b, err = os.ReadFile(filepath.Join(out, runner.JUnitFile))
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(b, &junit))
	assert.Equal(t, 13, junit.Tests)
	assert.Equal(t, 1, junit.Failures)
	require.Len(t, junit.Suites, 1)
	var cases []string
	for _, c := range junit.Suites[0].Cases {
		cases = append(cases, c.Name)
		// Each case carries its transcript, read from the shard that ran it.
		assert.NotEmpty(t, c.SystemOut, "case %s", c.Name)
		assert.Equal(t, c.Name == "broken", c.Failure != nil, "case %s", c.Name)
	}
	assert.Equal(t, wholeKeys, cases)

	md, err := os.ReadFile(filepath.Join(out, runner.SummaryMDFile))
	require.NoError(t, err)
	for _, k := range wholeKeys {
		assert.Contains(t, string(md), "`"+k+"`")
	}
	assert.Contains(t, string(md), "13 sessions · 12 passed · 1 failed")

	// The aggregates over the shards are those of the whole run, durations aside.
	passes := func(groups []runner.Group) []string {
		var out []string
		for _, g := range groups {
			out = append(out, fmt.Sprintf("%s %d/%d tasks=%d %v %v", g.Label(), g.Passed, g.Sessions, g.Tasks, g.PassAtK, g.ByStatus))
		}
		return out
	}
	assert.Equal(t, passes(whole.Aggregates.ByJob), passes(onDisk.Aggregates.ByJob))
	assert.Equal(t, passes(whole.Aggregates.ByModel), passes(onDisk.Aggregates.ByModel))
	assert.Contains(t, passes(onDisk.Aggregates.ByJob), "answer 9/9 tasks=3 map[1:1 2:1 3:1] map[success:9]")
	assert.Contains(t, passes(onDisk.Aggregates.ByJob), "broken 0/1 tasks=1 map[1:0] map[error_checks:1]")
	assert.Contains(t, string(md), "### By job")
}

// copyRunDir copies a run's output folder to a new one and returns it.
func copyRunDir(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(dir))
	require.NoError(t, os.CopyFS(dst, os.DirFS(dir)))
	return dst
}

// rewriteJSON rewrites the JSON file path through edit.
func rewriteJSON[T any](t *testing.T, path string, edit func(*T)) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var v T
	require.NoError(t, json.Unmarshal(b, &v))
	edit(&v)
	b, err = json.Marshal(&v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// TestMergeRejects gives Merge folders that do not form one complete run; each must be
// refused with ErrMergeInputs and a message that says what is wrong, and nothing is
// written.
func TestMergeRejects(t *testing.T) {
	t.Parallel()
	shards := runDemoShards(t, shardBatchSpec, 4, nil)
	other := runDemoShards(t, shardBatchSpec+"  - id: extra\n    prompt: One more.\n", 4, nil)
	halves := runDemoShards(t, shardBatchSpec, 2, nil)
	whole := t.TempDir()
	runDemo(t, loadBatch(t, shardBatchSpec), whole, nil)
	filtered := runDemoShards(t, shardBatchSpec, 4, func(o *runner.Options) { o.Filter = "answer*" })

	tests := map[string]struct {
		give func(t *testing.T) []string
		want string
	}{
		"no folders": {
			give: func(*testing.T) []string { return nil },
			want: "no shard folders",
		},
		"missing shard": {
			give: func(*testing.T) []string { return shards[:3] },
			want: "missing shard(s) 3/4",
		},
		"missing shards": {
			give: func(*testing.T) []string { return []string{shards[1], shards[3]} },
			want: "missing shard(s) 0/4, 2/4",
		},
		"same shard twice": {
			give: func(*testing.T) []string { return []string{shards[0], shards[1], shards[1], shards[2], shards[3]} },
			want: "shard 1/4 given twice",
		},
		"copy of a shard": {
			give: func(t *testing.T) []string { return append(slices.Clone(shards), copyRunDir(t, shards[2])) },
			want: "shard 2/4 given twice",
		},
		"shard of a different spec": {
			give: func(*testing.T) []string { return []string{shards[0], shards[1], shards[2], other[3]} },
			want: "comes from a different spec",
		},
		"different shard counts": {
			give: func(*testing.T) []string { return []string{shards[0], shards[1], halves[1]} },
			want: "different numbers of shards",
		},
		"unsharded run among shards": {
			give: func(*testing.T) []string { return append([]string{whole}, shards...) },
			want: "different numbers of shards",
		},
		"different filter": {
			give: func(*testing.T) []string { return []string{shards[0], shards[1], shards[2], filtered[3]} },
			want: "different --filter values",
		},
		"unfinished run": {
			give: func(t *testing.T) []string {
				dir := copyRunDir(t, shards[3])
				rewriteJSON(t, filepath.Join(dir, runner.RunFile), func(in *runner.RunInfo) { in.EndedAt = "" })
				return []string{shards[0], shards[1], shards[2], dir}
			},
			want: "did not finish",
		},
		"summary of an earlier run": {
			give: func(t *testing.T) []string {
				dir := copyRunDir(t, shards[3])
				b, err := os.ReadFile(filepath.Join(shards[2], runner.SummaryFile))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, runner.SummaryFile), b, 0o644))
				return []string{shards[0], shards[1], shards[2], dir}
			},
			want: "is not the one of its run.json",
		},
		"session in two shards": {
			give: func(t *testing.T) []string {
				dir := copyRunDir(t, shards[1])
				var first runner.Summary
				b, err := os.ReadFile(filepath.Join(shards[0], runner.SummaryFile))
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(b, &first))
				stolen := first.Sessions[0]
				rewriteJSON(t, filepath.Join(dir, runner.SummaryFile), func(s *runner.Summary) {
					s.Sessions = append(s.Sessions, stolen)
					slices.SortFunc(s.Sessions, func(a, b runner.Row) int { return strings.Compare(a.Key, b.Key) })
				})
				rewriteJSON(t, filepath.Join(dir, runner.RunFile), func(in *runner.RunInfo) {
					in.Selected = append(in.Selected, stolen.Key)
					slices.Sort(in.Selected)
				})
				return []string{shards[0], dir, shards[2], shards[3]}
			},
			want: "appears in both",
		},
		"session missing from its shard": {
			give: func(t *testing.T) []string {
				dir := copyRunDir(t, shards[2])
				rewriteJSON(t, filepath.Join(dir, runner.SummaryFile), func(s *runner.Summary) { s.Sessions = s.Sessions[1:] })
				rewriteJSON(t, filepath.Join(dir, runner.RunFile), func(in *runner.RunInfo) { in.Selected = in.Selected[1:] })
				return []string{shards[0], shards[1], dir, shards[3]}
			},
			want: "the shards hold 12 sessions but the spec has 13",
		},
		"not a run folder": {
			give: func(t *testing.T) []string { return []string{shards[0], t.TempDir()} },
			want: "is not a run's output folder",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			_, err := runner.Merge(out, tt.give(t))
			require.Error(t, err)
			assert.True(t, errors.Is(err, runner.ErrMergeInputs), "%v", err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NoFileExists(t, filepath.Join(out, runner.SummaryFile))
		})
	}

	t.Run("output folder is an input", func(t *testing.T) {
		dirs := []string{copyRunDir(t, shards[0]), shards[1], shards[2], shards[3]}
		before, err := os.ReadFile(filepath.Join(dirs[0], runner.SummaryFile))
		require.NoError(t, err)
		_, err = runner.Merge(dirs[0]+string(filepath.Separator)+".", dirs)
		require.ErrorIs(t, err, runner.ErrMergeInputs)
		assert.Contains(t, err.Error(), "is also an input")
		after, err := os.ReadFile(filepath.Join(dirs[0], runner.SummaryFile))
		require.NoError(t, err)
		assert.Equal(t, before, after)
	})

	t.Run("filtered shards merge", func(t *testing.T) {
		sum, err := runner.Merge(filepath.Join(t.TempDir(), "merged"), filtered)
		require.NoError(t, err)
		assert.Equal(t, 9, sum.Totals.Sessions, "the 3×3 answer sessions")
	})
}

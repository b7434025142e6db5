package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/transport/scripted"
)

// providerFunc is a function-field fake of runner.Providers.
type providerFunc func(s jobs.Session) (agent.Provider, runner.ProviderInfo, error)

func (f providerFunc) Provider(s jobs.Session, _ runner.Liveness) (agent.Provider, runner.ProviderInfo, error) {
	return f(s)
}

// evalSpec is 3 jobs × 2 models × repeat 3; a session passes its check when its script
// writes notes/success.txt.
const evalSpec = `version: 1
concurrency: 6
defaults:
  tools: [Write]
  workspace: {mode: copy}
jobs:
  - &job
    id: easy
    prompt: Write the notes.
    matrix: {model: [alpha, beta]}
    repeat: 3
    checks: [{name: notes, run: test -f notes/success.txt}]
  - {<<: *job, id: medium}
  - {<<: *job, id: hard}
`

// evalPasses says which repeats of each job and model pass (the rest fail their check).
var evalPasses = map[string][]int{
	"easy/alpha": {1, 2, 3}, "easy/beta": {2},
	"medium/alpha": {1, 3}, "medium/beta": {},
	"hard/alpha": {3}, "hard/beta": {1, 2},
}

// runEvaluation runs evalSpec in-process and returns its out folder and summary.
func runEvaluation(t *testing.T) (string, *runner.Summary) {
	t.Helper()
	scripts := loadScripts(t)
	idle, err := scripted.ParseScript("idle.yaml", []byte("steps:\n  - text: I looked and changed nothing.\n"))
	require.NoError(t, err)
	p := providerFunc(func(s jobs.Session) (agent.Provider, runner.ProviderInfo, error) {
		script := idle
		for _, r := range evalPasses[s.JobID+"/"+s.Settings.Model] {
			if r == s.Repeat {
				script = scripts["success"]
			}
		}
		return scripted.New(scripted.Options{Default: script}), runner.ProviderInfo{Name: "scripted", Model: s.Settings.Model}, nil
	})
	spec := writeSpec(t, t.TempDir(), evalSpec)
	out := filepath.Join(t.TempDir(), "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: p, Version: "v9.9.9-test",
		Environ: []string{"PATH=" + os.Getenv("PATH")}}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Len(t, sum.Sessions, 18)
	return out, sum
}

func TestEvaluationAggregates(t *testing.T) {
	t.Parallel()
	out, sum := runEvaluation(t)

	// What the summary returned is what summary.json holds.
	var onDisk runner.Summary
	readJSON(t, filepath.Join(out, runner.SummaryFile), &onDisk)
	assert.Equal(t, sum.Aggregates, onDisk.Aggregates)
	assert.Equal(t, "v9.9.9-test", onDisk.Version)

	// pass@k by hand: a task of n=3 with c passes has pass@1 = c/3, pass@2 = 1 - C(3-c,2)/3.
	at := map[int][3]float64{0: {0, 0, 0}, 1: {1.0 / 3, 2.0 / 3, 1}, 2: {2.0 / 3, 1, 1}, 3: {1, 1, 1}}
	mean := func(cs ...int) map[string]float64 {
		m := map[string]float64{}
		for k := range 3 {
			sum := 0.0
			for _, c := range cs {
				sum += at[c][k]
			}
			m[fmt.Sprint(k+1)] = sum / float64(len(cs))
		}
		return m
	}
	want := map[string]struct {
		passed int
		atK    map[string]float64
	}{
		"alpha":        {6, mean(3, 2, 1)},
		"beta":         {3, mean(1, 0, 2)},
		"easy":         {4, mean(3, 1)},
		"medium":       {2, mean(2, 0)},
		"hard":         {3, mean(1, 2)},
		"medium·alpha": {2, mean(2)},
	}
	got := map[string]runner.Group{}
	for _, g := range onDisk.Aggregates.ByModel {
		assert.Equal(t, "scripted", g.Provider)
		got[g.Model] = g
	}
	for _, g := range onDisk.Aggregates.ByJob {
		got[g.JobID] = g
	}
	for _, g := range onDisk.Aggregates.ByJobModel {
		got[g.JobID+"·"+g.Model] = g
	}
	assert.Len(t, onDisk.Aggregates.ByJobModel, 6)
	for name, w := range want {
		g, ok := got[name]
		require.True(t, ok, name)
		assert.Equal(t, w.passed, g.Passed, name)
		assert.InDelta(t, float64(w.passed)/float64(g.Sessions), g.PassRate, 1e-6, name)
		require.Len(t, g.PassAtK, 3, name)
		for k, v := range w.atK {
			assert.InDelta(t, v, g.PassAtK[k], 1e-6, "%s pass@%s", name, k)
		}
		assert.Equal(t, g.Sessions-g.Passed, g.ByStatus[protocol.StatusChecks], name)
		assert.LessOrEqual(t, g.DurationP50, g.DurationP90, name)
		assert.True(t, g.CostComplete, name)
	}
	assert.Equal(t, 9, got["alpha"].Sessions)
	assert.Equal(t, 3, got["alpha"].Tasks)

	// summary.md shows the same numbers: alpha's pass@2 is (1 + 1 + 2/3) / 3 = 88.9%.
	md, err := os.ReadFile(filepath.Join(out, runner.SummaryMDFile))
	require.NoError(t, err)
	assert.Contains(t, string(md), "### By model")
	assert.Contains(t, string(md), "| pass@1 | pass@2 | pass@3 |")
	assert.Contains(t, string(md), "| scripted/alpha | 9 | 6 | 66.7% | 66.7% | 88.9% | 100.0% |")
	assert.Contains(t, string(md), "| scripted/beta | 9 | 3 | 33.3% | 33.3% | 55.6% | 66.7% |")
	assert.Contains(t, string(md), "| easy | 6 | 4 | 66.7% | 66.7% | 83.3% | 100.0% |")
	assert.Contains(t, string(md), "error_checks 3")
}

// TestProvenance checks that every artifact that names a session says what produced it.
func TestProvenance(t *testing.T) {
	t.Parallel()
	out, sum := runEvaluation(t)
	row := rows(sum)["hard+model=beta.r2"]
	want := protocol.Provenance{Provider: "scripted", Model: "beta", Matrix: map[string]string{"model": "beta"},
		Repeat: 2, Attempt: 1, Version: "v9.9.9-test"}
	assert.Equal(t, want, row.Provenance)
	assert.Equal(t, "hard", row.JobID)

	dir := filepath.Join(out, runner.SessionsDir, "hard+model=beta.r2")
	var res protocol.Result
	readJSON(t, filepath.Join(dir, runner.ResultFile), &res)
	assert.Equal(t, want, res.Provenance)
	for _, file := range []string{runner.StreamFile, runner.EventsFile} {
		events := readEvents(t, filepath.Join(dir, file), file == runner.EventsFile)
		require.NotEmpty(t, events)
		require.Equal(t, protocol.KindSessionStart, events[0].Kind)
		assert.Equal(t, want, events[0].Session.Provenance, file)
		last := events[len(events)-1]
		require.Equal(t, protocol.KindResult, last.Kind)
		assert.Equal(t, want, last.Final.Provenance, file)
	}

	junit, err := os.ReadFile(filepath.Join(out, runner.JUnitFile))
	require.NoError(t, err)
	assert.Contains(t, string(junit), "provider=scripted model=beta matrix.model=beta repeat=2 attempt=1")
	assert.Contains(t, string(junit), `<property name="agentrun_version" value="v9.9.9-test">`)

	var info runner.RunInfo
	readJSON(t, filepath.Join(out, runner.RunFile), &info)
	assert.Equal(t, "v9.9.9-test", info.Version)
	assert.True(t, strings.HasPrefix(row.Key, "hard+model=beta"))
}

package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
)

const resumeSpec = `version: 1
defaults: {tools: [Write]}
jobs:
  - {id: ok, model: success, prompt: Write.}
  - id: failing
    model: success
    prompt: Write, then fail a check.
    checks: [{name: fails, run: exit 1}]
  - {id: gone, model: success, prompt: Write.}
  - {id: interrupted, model: success, prompt: Write.}
`

// firstRun runs resumeSpec into out, then makes it look like an interrupted run: the
// folder of gone is missing and interrupted's result says cancelled. It returns the
// session id of each result it left.
func firstRun(t *testing.T, specDir, out string) map[string]string {
	t.Helper()
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t))}).
		Run(context.Background(), writeSpec(t, specDir, resumeSpec))
	require.NoError(t, err)
	assert.Equal(t, map[protocol.Status]int{protocol.StatusSuccess: 3, protocol.StatusChecks: 1}, sum.Totals.ByStatus)
	require.NoError(t, os.RemoveAll(filepath.Join(out, runner.SessionsDir, "gone")))
	path := filepath.Join(out, runner.SessionsDir, "interrupted", runner.ResultFile)
	var res protocol.Result
	readJSON(t, path, &res)
	res.Status, res.IsError = protocol.StatusCancelled, true
	b, err := json.Marshal(res)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	ids := map[string]string{}
	for _, r := range sum.Sessions {
		ids[r.Key] = r.SessionID
	}
	return ids
}

func TestRunResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		resume      bool
		rerunFailed bool
		// edit changes the spec of the second run.
		edit       func(string) string
		wantRun    []string
		wantReused []string
	}{
		{
			name: "resume keeps results and reruns missing and interrupted ones", resume: true,
			wantRun: []string{"gone", "interrupted"}, wantReused: []string{"failing", "ok"},
		},
		{
			name: "rerun-failed also reruns failures", rerunFailed: true,
			wantRun: []string{"failing", "gone", "interrupted"}, wantReused: []string{"ok"},
		},
		{
			name: "a changed session runs again", resume: true,
			edit: func(s string) string {
				return strings.Replace(s, "{id: ok, model: success, prompt: Write.}", "{id: ok, model: success, prompt: Write it.}", 1)
			},
			wantRun: []string{"gone", "interrupted", "ok"}, wantReused: []string{"failing"},
		},
		{
			name:    "without resume everything runs",
			wantRun: []string{"failing", "gone", "interrupted", "ok"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specDir, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
			firstIDs := firstRun(t, specDir, out)
			text := resumeSpec
			if tt.edit != nil {
				text = tt.edit(text)
			}
			p := newInProcess(loadScripts(t))
			sum, err := newRunner(t, runner.Options{Out: out, Providers: p, Resume: tt.resume, RerunFailed: tt.rerunFailed}).
				Run(context.Background(), writeSpec(t, specDir, text))
			require.NoError(t, err)
			results := verifyOut(t, out, sum)

			var ran []string
			for key, n := range p.calls.keys() {
				ran = append(ran, key)
				assert.Equal(t, 1, n, "%s ran once", key)
			}
			sort.Strings(ran)
			assert.Equal(t, tt.wantRun, ran)
			require.Len(t, sum.Sessions, 4, "every session once in the summary")
			assert.Equal(t, len(tt.wantReused), sum.Totals.Reused)
			byKey := rows(sum)
			for _, key := range tt.wantReused {
				assert.True(t, byKey[key].Reused, key)
				assert.Equal(t, firstIDs[key], results[key].SessionID, "%s keeps its earlier result", key)
			}
			for _, key := range tt.wantRun {
				assert.False(t, byKey[key].Reused, key)
				assert.NotEqual(t, firstIDs[key], results[key].SessionID, "%s has a new result", key)
			}
			var info runner.RunInfo
			readJSON(t, filepath.Join(out, runner.RunFile), &info)
			assert.Equal(t, []string{"failing", "gone", "interrupted", "ok"}, info.Selected)
		})
	}
}

func TestRunFilter(t *testing.T) {
	t.Parallel()
	const spec = `version: 1
defaults: {tools: [Write]}
jobs:
  - {id: alpha, model: success, prompt: Write.}
  - {id: beta, model: success, prompt: Write.}
  - {id: gamma, model: success, repeat: 2, prompt: Write.}
`
	tests := map[string]struct {
		give string
		want []string
	}{
		"key glob":         {give: "gamma.*", want: []string{"gamma.r1", "gamma.r2"}},
		"job id":           {give: "gamma", want: []string{"gamma.r1", "gamma.r2"}},
		"one key":          {give: "gamma.r2", want: []string{"gamma.r2"}},
		"comma list":       {give: "alpha, beta", want: []string{"alpha", "beta"}},
		"character class":  {give: "[ab]*", want: []string{"alpha", "beta"}},
		"no filter is all": {give: "", want: []string{"alpha", "beta", "gamma.r1", "gamma.r2"}},
	}
	scripts := loadScripts(t)
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, runner.ValidateFilter(tt.give))
			p := newInProcess(scripts)
			out := filepath.Join(t.TempDir(), "out")
			sum, err := newRunner(t, runner.Options{Out: out, Providers: p, Filter: tt.give}).
				Run(context.Background(), writeSpec(t, t.TempDir(), spec))
			require.NoError(t, err)
			verifyOut(t, out, sum)
			var keys []string
			for _, r := range sum.Sessions {
				keys = append(keys, r.Key)
			}
			assert.Equal(t, tt.want, keys)
			assert.Len(t, p.calls.keys(), len(tt.want))
			entries, err := os.ReadDir(filepath.Join(out, runner.SessionsDir))
			if len(tt.want) == 0 {
				assert.True(t, errors.Is(err, os.ErrNotExist) || len(entries) == 0)
			} else {
				require.NoError(t, err)
				assert.Len(t, entries, len(tt.want), "only the selected sessions have folders")
			}
			var info runner.RunInfo
			readJSON(t, filepath.Join(out, runner.RunFile), &info)
			assert.Equal(t, tt.give, info.Filter)
			assert.Equal(t, 4, info.SessionsTotal)
			assert.Equal(t, 0, sum.ExitCode(false))
		})
	}
	assert.Error(t, runner.ValidateFilter("a,[b"), "a bad glob is a usage error")

	// A filter that matches nothing starts nothing and writes nothing: a run of no
	// session would look green. A shard without a match is fine when another has one.
	out := filepath.Join(t.TempDir(), "out")
	parsed := writeSpec(t, t.TempDir(), spec)
	p := newInProcess(scripts)
	_, err := newRunner(t, runner.Options{Out: out, Providers: p, Filter: "delta,eps*"}).Run(context.Background(), parsed)
	require.ErrorIs(t, err, runner.ErrNoMatch)
	assert.Contains(t, err.Error(), `"delta,eps*" matches no session key or job id (the spec's 4 sessions are alpha, beta, gamma.r1, …)`)
	assert.NoDirExists(t, out)
	assert.Empty(t, p.calls.keys())
	plan, err := newRunner(t, runner.Options{Out: out, Filter: "alpha", Shard: runner.Shard{Index: 1, Total: 2}}).Plan(parsed)
	require.NoError(t, err)
	assert.Empty(t, plan.Run)
}

func TestRunLock(t *testing.T) {
	t.Parallel()
	entered, release := make(chan string), make(chan struct{})
	p := newInProcess(loadScripts(t))
	p.fakes["gate"] = gated(entered, release)
	spec := writeSpec(t, t.TempDir(), `version: 1
defaults: {tools: []}
jobs:
  - {id: held, model: gate, prompt: Wait for the test.}
`)
	out := filepath.Join(t.TempDir(), "out")
	first := startRun(context.Background(), newRunner(t, runner.Options{Out: out, Providers: p}), spec)
	<-entered // the first run holds the lock and waits inside its session

	_, err := newRunner(t, runner.Options{Out: out, Providers: p}).Run(context.Background(), spec)
	assert.ErrorIs(t, err, runner.ErrLocked, "a second run on the same folder")
	other := filepath.Join(t.TempDir(), "out")
	otherRun := startRun(context.Background(), newRunner(t, runner.Options{Out: other, Providers: p}), spec)
	<-entered // another folder is free

	close(release)
	for _, done := range []<-chan runResult{first, otherRun} {
		res := <-done
		require.NoError(t, res.err)
		assert.Equal(t, 0, res.sum.ExitCode(false))
	}
	sum, err := newRunner(t, runner.Options{Out: out, Providers: p}).Run(context.Background(), spec)
	require.NoError(t, err, "the lock is released when a run ends")
	verifyOut(t, out, sum)
}

package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/fuzzguard"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/transport/scripted"
)

// demoModel gives every session the built-in scripted model (its demo policy),
// in-process, as cmd/agentrun does when no API key is configured.
type demoModel struct{ model *scripted.Model }

func newDemoModel() demoModel {
	return demoModel{model: scripted.New(scripted.Options{})}
}

func (p demoModel) Provider(jobs.Session, runner.Liveness) (agent.Provider, runner.ProviderInfo, error) {
	return p.model, runner.ProviderInfo{Name: "scripted", Model: "scripted"}, nil
}

// shardBatchSpec has 13 sessions: a 3×3 matrix with repeats, a repeated job, a job whose
// check always fails and a single session.
const shardBatchSpec = `version: 1
concurrency: 4
defaults:
  provider: scripted
  tools: [Read]
  max_turns: 5
  timeout: 1m
jobs:
  - id: answer
    prompt: "Answer about {{ .matrix.topic }}, try {{ .repeat }}."
    matrix: {topic: [alpha, beta, gamma]}
    repeat: 3
  - id: review
    prompt: Review the notes.
    repeat: 2
  - id: broken
    prompt: Say anything.
    checks:
      - {name: always-fails, run: "exit 3"}
  - id: solo
    prompt: Say hello.
`

// loadBatch writes text as jobs.yaml in a new temporary folder and loads it.
func loadBatch(t *testing.T, text string) *jobs.Spec {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jobs.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	spec, err := jobs.Load(path, func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	return spec
}

// demoRunOptions are the options of a test run into out; change adjusts them.
func demoRunOptions(t *testing.T, out string, change func(*runner.Options)) runner.Options {
	home := t.TempDir()
	opts := runner.Options{Out: out, Providers: newDemoModel(), Home: home, InstructionHome: home,
		Version: "test", Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}}
	if change != nil {
		change(&opts)
	}
	return opts
}

// runDemo runs spec into out and returns its summary.
func runDemo(t *testing.T, spec *jobs.Spec, out string, change func(*runner.Options)) *runner.Summary {
	t.Helper()
	sum, err := newRunner(t, demoRunOptions(t, out, change)).Run(context.Background(), spec)
	require.NoError(t, err)
	return sum
}

func onShard(sh runner.Shard) func(*runner.Options) {
	return func(o *runner.Options) { o.Shard = sh }
}

func TestParseShard(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give    string
		want    runner.Shard
		wantErr string
	}{
		"first":          {give: "0/4", want: runner.Shard{Index: 0, Total: 4}},
		"last":           {give: "3/4", want: runner.Shard{Index: 3, Total: 4}},
		"single":         {give: "0/1", want: runner.Shard{Index: 0, Total: 1}},
		"index too big":  {give: "4/4", wantErr: "0 <= I < N"},
		"negative":       {give: "-1/4", wantErr: "0 <= I < N"},
		"zero total":     {give: "0/0", wantErr: "0 <= I < N"},
		"one-based form": {give: "1 of 4", wantErr: "want I/N"},
		"missing total":  {give: "2", wantErr: "want I/N"},
		"trailing text":  {give: "1/4x", wantErr: "want I/N"},
		"plus sign":      {give: "+1/4", wantErr: "want I/N"},
		"spaces":         {give: " 1/4", wantErr: "want I/N"},
		"empty":          {give: "", wantErr: "want I/N"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := runner.ParseShard(tt.give)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.give, got.String())
		})
	}
}

// TestShardsCoverEverySessionOnce plans every shard of several shard counts (more
// shards than sessions included) and checks that together they select every session
// exactly once, that each shard agrees on the digest of the full list, and that the
// assignment does not depend on the order of the jobs in the file.
func TestShardsCoverEverySessionOnce(t *testing.T) {
	t.Parallel()
	spec := loadBatch(t, shardBatchSpec)
	// The same jobs in another order: the assignment follows the sorted keys.
	reordered := loadBatch(t, frontLastJob(shardBatchSpec))
	require.Equal(t, "solo", reordered.Jobs[0].ID)
	full, err := runner.New(demoRunOptions(t, t.TempDir(), nil)).Plan(spec)
	require.NoError(t, err)
	require.Len(t, full.All, 13)
	var all []string
	for _, s := range full.All {
		all = append(all, s.Key)
	}
	for _, total := range []int{1, 2, 3, 4, 5, 7, 13, 20} {
		t.Run(fmt.Sprint(total), func(t *testing.T) {
			seen := map[string]int{}
			for i := range total {
				sh := runner.Shard{Index: i, Total: total}
				p, err := runner.New(demoRunOptions(t, t.TempDir(), onShard(sh))).Plan(spec)
				require.NoError(t, err)
				q, err := runner.New(demoRunOptions(t, t.TempDir(), onShard(sh))).Plan(reordered)
				require.NoError(t, err)
				assert.Equal(t, full.SessionsDigest, p.SessionsDigest, "shard %s", sh)
				assert.Equal(t, sessionKeys(p.Run), sessionKeys(q.Run), "shard %s depends on the job order", sh)
				assert.Equal(t, len(all)-len(p.Run), p.Excluded, "shard %s", sh)
				// Round-robin keeps the shards within one session of each other.
				assert.InDelta(t, float64(len(all))/float64(total), len(p.Run), 1, "shard %s", sh)
				for _, k := range sessionKeys(p.Run) {
					seen[k]++
				}
			}
			for _, k := range all {
				assert.Equal(t, 1, seen[k], "session %s", k)
			}
			assert.Len(t, seen, len(all))
		})
	}
}

// frontLastJob moves the last job of shardBatchSpec to the front of its job list.
func frontLastJob(spec string) string {
	head, jobsPart, ok := strings.Cut(spec, "jobs:\n")
	if !ok {
		panic("shardBatchSpec has no jobs")
	}
	i := strings.LastIndex(jobsPart, "  - id:")
	return head + "jobs:\n" + jobsPart[i:] + jobsPart[:i]
}

func sessionKeys(sessions []jobs.Session) []string {
	out := []string{}
	for _, s := range sessions {
		out = append(out, s.Key)
	}
	return out
}

// TestShardRunRecordsSessionList runs one shard and checks its run.json: the shard, the
// sessions it selected, and the digest and size of the full session list.
func TestShardRunRecordsSessionList(t *testing.T) {
	t.Parallel()
	spec := loadBatch(t, shardBatchSpec)
	full, err := runner.New(demoRunOptions(t, t.TempDir(), nil)).Plan(spec)
	require.NoError(t, err)
	out := t.TempDir()
	sh := runner.Shard{Index: 1, Total: 3}
	sum := runDemo(t, spec, out, onShard(sh))

	var info runner.RunInfo
	b, err := os.ReadFile(filepath.Join(out, runner.RunFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &info))
	require.NotNil(t, info.Shard)
	assert.Equal(t, sh, *info.Shard)
	assert.Equal(t, full.SessionsDigest, info.SessionsDigest)
	assert.Equal(t, full.SpecDigest, info.SpecDigest)
	assert.Equal(t, 13, info.SessionsTotal)
	assert.NotEmpty(t, info.EndedAt)
	var want []string
	for i, s := range full.All {
		if i%3 == 1 {
			want = append(want, s.Key)
		}
	}
	slices.Sort(want)
	assert.Equal(t, want, info.Selected)
	assert.Equal(t, "1/3", sum.Shard)
	assert.Len(t, sum.Sessions, len(want))
	for _, k := range want {
		assert.DirExists(t, filepath.Join(out, runner.SessionsDir, k))
	}
}

// FuzzParseShard checks that ParseShard accepts exactly the canonical "I/N" with
// 0 ≤ I < N, so the value it returns prints back as its input.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", "4/4", "-1/2", "01/4", "1/04", "+1/4", "1/4 ", "1 / 4", "0/0", "9999999999999999999/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzguard.Run(len(s), func() {
			sh, err := runner.ParseShard(s)
			if err != nil {
				assert.Equal(t, runner.Shard{}, sh)
				return
			}
			assert.Equal(t, s, sh.String())
			assert.True(t, 0 <= sh.Index && sh.Index < sh.Total, "%s", s)
		})
	})
}

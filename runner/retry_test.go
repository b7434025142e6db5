package runner_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/fuzzguard"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
)

func TestParseRetry(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give    string
		want    []string
		wantErr string
	}{
		"statuses":              {give: "provider,timeout,inactivity", want: []string{"provider", "timeout", "inactivity"}},
		"spaces and duplicates": {give: " provider , provider,crashed", want: []string{"provider", "crashed"}},
		"a whole status":        {give: "error_provider,cancelled", want: []string{"provider", "cancelled"}},
		"error kinds":           {give: "http_429,overloaded,network", want: []string{"http_429", "overloaded", "network"}},
		"a typo":                {give: "provider,timout", wantErr: `unknown failure class "timout"; did you mean "timeout"?`},
		"no suggestion":         {give: "weather", wantErr: `unknown failure class "weather"; want statuses or error kinds of result.json: max_turns, timeout,`},
		"success":               {give: "success", wantErr: `"success" is not a failure`},
		"an empty class":        {give: "provider,", wantErr: "empty class"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := runner.ParseRetry(tt.give)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	for _, c := range runner.DefaultRetry {
		assert.Contains(t, runner.RetryClasses(), c)
	}
}

// TestRetryChoosesClasses runs three sessions that end differently (a provider failure
// of kind server, a check failure, a success) and checks which of them resume plans to
// run again for each choice of failure classes.
func TestRetryChoosesClasses(t *testing.T) {
	t.Parallel()
	spec := writeSpec(t, t.TempDir(), `version: 1
defaults: {tools: [Write]}
jobs:
  - {id: outage, model: retry, prompt: Answer.}
  - {id: checked, model: success, prompt: Write., checks: [{name: fails, run: exit 1}]}
  - {id: ok, model: success, prompt: Write.}
`)
	out := filepath.Join(t.TempDir(), "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t))}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Equal(t, map[string]protocol.Status{"outage": protocol.StatusProvider, "checked": protocol.StatusChecks,
		"ok": protocol.StatusSuccess}, statusByKey(sum))
	require.Equal(t, protocol.ErrServer, rows(sum)["outage"].Error.Kind)

	tests := map[string]struct {
		opts runner.Options
		want []string
	}{
		"resume: cancelled and crashed only": {opts: runner.Options{Resume: true}, want: nil},
		"a status":                           {opts: runner.Options{Retry: []string{"provider"}}, want: []string{"outage"}},
		"an error kind":                      {opts: runner.Options{Retry: []string{"server"}}, want: []string{"outage"}},
		"another error kind":                 {opts: runner.Options{Retry: []string{"http_429", "timeout"}}, want: nil},
		"check failures":                     {opts: runner.Options{Retry: []string{"checks", "crashed"}}, want: []string{"checked"}},
		"rerun-failed: every failure":        {opts: runner.Options{RerunFailed: true}, want: []string{"checked", "outage"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tt.opts.Out = out
			plan, err := runner.New(tt.opts).Plan(spec)
			require.NoError(t, err)
			var ran []string
			for _, s := range plan.Run {
				ran = append(ran, s.Key)
			}
			assert.Equal(t, tt.want, ran)
			assert.Len(t, plan.Reused, 3-len(tt.want))
		})
	}
}

// TestResumeRefusesAnotherModel checks that resume keeps no earlier result of another
// provider or model than Options.Resolve gives the session now.
func TestResumeRefusesAnotherModel(t *testing.T) {
	t.Parallel()
	spec := writeSpec(t, t.TempDir(), "version: 1\ndefaults: {tools: [Write]}\njobs:\n  - {id: a, model: success, prompt: Write., repeat: 2}\n")
	out := filepath.Join(t.TempDir(), "out")
	_, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t))}).Run(context.Background(), spec)
	require.NoError(t, err)
	resolve := func(name, model string) func(jobs.Session) (runner.ProviderInfo, error) {
		return func(jobs.Session) (runner.ProviderInfo, error) {
			return runner.ProviderInfo{Name: name, Model: model}, nil
		}
	}
	tests := map[string]struct {
		opts    runner.Options
		wantErr string
	}{
		"the same provider and model": {opts: runner.Options{Resume: true, Resolve: resolve("scripted", "success")}},
		"another model": {
			opts:    runner.Options{Resume: true, Resolve: resolve("scripted", "other")},
			wantErr: "a.r1 ran on provider scripted, model success, and this run would use provider scripted, model other (2 sessions differ)",
		},
		"another provider": {
			opts:    runner.Options{RerunFailed: true, Resolve: resolve("anthropic", "success")},
			wantErr: "provider anthropic, model success",
		},
		"without resume nothing is kept": {opts: runner.Options{Resolve: resolve("anthropic", "x")}},
		"without a resolver":             {opts: runner.Options{Resume: true}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tt.opts.Out = out
			plan, err := runner.New(tt.opts).Plan(spec)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, runner.ErrResumeMismatch)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Nil(t, plan)
		})
	}
}

// FuzzParseRetry checks that ParseRetry returns either an error and nothing, or at
// least one known class, each once, which read back as themselves.
func FuzzParseRetry(f *testing.F) {
	for _, s := range []string{"provider", "provider,timeout,inactivity", "error_provider, crashed", "http_429,,x", "success", "provder"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzguard.Run(len(s), func() {
			got, err := runner.ParseRetry(s)
			if err != nil {
				assert.Nil(t, got)
				return
			}
			require.NotEmpty(t, got, "%q", s)
			classes := runner.RetryClasses()
			seen := map[string]bool{}
			for _, c := range got {
				assert.Contains(t, classes, c)
				assert.False(t, seen[c], "%q twice in %q", c, s)
				seen[c] = true
			}
			again, err := runner.ParseRetry(strings.Join(got, ","))
			require.NoError(t, err)
			assert.Equal(t, got, again)
		})
	})
}

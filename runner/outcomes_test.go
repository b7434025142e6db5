package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
)

// The secrets of the mixed runs: an API key given in Options.Secrets, and a token
// named in the spec's secrets and read from the environment. The scripts repeat both.
const (
	apiKey   = "sk-ant-TESTSECRET-0123456789"
	envToken = "tok-ENVSECRET-9876543210"
	envName  = "AGENTRUN_TEST_TOKEN"
)

// mixedSpec has one job per outcome. Jobs choose their script by model name; a few
// outcomes come about differently in-process and over HTTP.
func mixedSpec(overHTTP bool) string {
	timeout := "  - {id: timeout, model: slow, timeout: 300ms, prompt: Answer slowly.}\n"
	stall := "  - {id: stall, model: sleep, idle_timeout: 300ms, prompt: Wait.}\n"
	retry := "  - {id: retry, model: retry, retries: 1, prompt: Try twice.}\n"
	extra := "  - {id: panic, model: panic, prompt: Explode in the model.}\n" +
		"  - {id: no-provider, model: unscripted, prompt: Find no provider.}\n"
	if overHTTP {
		timeout = "  - {id: timeout, model: stall, timeout: 300ms, idle_timeout: 30s, prompt: Answer slowly.}\n"
		stall = "  - {id: stall, model: stall, provider: openai, idle_timeout: 300ms, prompt: Stall.}\n"
		retry = "  - {id: retry, model: retry-http, retries: 1, prompt: Try twice.}\n"
		// A 429 storm: every session hits two 429s and the shared limiter pauses them all.
		extra = "  - {id: rate-limit, model: ratelimit, repeat: 3, prompt: Wait out the rate limit.}\n" +
			"  - {id: rate-limit-openai, model: ratelimit, provider: openai, prompt: Wait out the rate limit.}\n"
	}
	return `version: 1
concurrency: 6
defaults:
  max_turns: 6
  timeout: 30s
  idle_timeout: 30s
  tool_timeout: 30s
  tools: [Read, Write, Edit, Bash]
  secrets: [` + envName + `]
  workspace: {mode: shared} # the spec, whose env default holds the token, is not copied
prices:
  budget: {input: 1000, output: 1000}
jobs:
  - {id: success, model: success, prompt: Write the notes.}
  - {id: max-turns, model: maxturns, max_turns: 2, prompt: Keep going.}
` + timeout + stall + retry + extra + `  - {id: auth, model: auth, prompt: Use a bad key.}
  - {id: max-tokens, model: maxtokens, prompt: Answer at length.}
  - {id: bad-request, model: badrequest, prompt: Send a bad request.}
  - id: checks
    model: success
    prompt: Write the notes, then be checked.
    checks:
      - {name: notes, run: test -f notes/success.txt}
      - {name: broken, run: "echo checking; echo broken >&2; exit 3"}
  - id: schema-bad
    model: schema-bad
    prompt: Answer in JSON.
    output_schema: &schema
      type: object
      required: [answer]
      properties: {answer: {type: integer}}
  - {id: schema-good, model: schema-good, prompt: Answer in JSON., output_schema: *schema}
  - {id: crash, model: crash, prompt: Explode in the provider.}
  - {id: budget, model: budget, budget: {max_cost_usd: 1.0}, prompt: Spend.}
  - id: secret
    model: secret
    prompt: Repeat the secrets.
    env: {` + envName + `: "${` + envName + `:-` + envToken + `}"} # a secret reaches a tool only when declared
    checks: [{name: env, run: 'echo "token=$` + envName + `"'}]
  - {id: many, model: success, repeat: 3, prompt: Write the notes again.}
`
}

// outcome is what one session of the mixed run must end with.
type outcome struct {
	status  protocol.Status
	errKind protocol.ErrorKind
	turns   int // -1: not checked
}

func mixedWant(overHTTP bool) map[string]outcome {
	want := map[string]outcome{
		"success":     {protocol.StatusSuccess, "", 2},
		"max-turns":   {protocol.StatusMaxTurns, protocol.ErrMaxTurns, 2},
		"timeout":     {protocol.StatusTimeout, protocol.ErrTimeout, 0},
		"stall":       {protocol.StatusInactivity, protocol.ErrInactivity, 0},
		"retry":       {protocol.StatusSuccess, "", 1},
		"auth":        {protocol.StatusAuth, protocol.ErrAuth, 0},
		"max-tokens":  {protocol.StatusMaxTokens, protocol.ErrMaxTokens, 1},
		"bad-request": {protocol.StatusRequest, protocol.ErrRequest, 0},
		"checks":      {protocol.StatusChecks, protocol.ErrChecks, 2},
		"schema-bad":  {protocol.StatusOutputSchema, protocol.ErrSchema, 1},
		"schema-good": {protocol.StatusSuccess, "", 1},
		"crash":       {protocol.StatusCrashed, protocol.ErrPanic, -1},
		"budget":      {protocol.StatusBudget, protocol.ErrBudget, 1},
		"secret":      {protocol.StatusSuccess, "", 2},
		"many.r1":     {protocol.StatusSuccess, "", 2},
		"many.r2":     {protocol.StatusSuccess, "", 2},
		"many.r3":     {protocol.StatusSuccess, "", 2},
	}
	if overHTTP {
		for _, key := range []string{"rate-limit.r1", "rate-limit.r2", "rate-limit.r3"} {
			want[key] = outcome{protocol.StatusSuccess, "", 1}
		}
		want["rate-limit-openai"] = outcome{protocol.StatusSuccess, "", 1}
	} else {
		want["panic"] = outcome{protocol.StatusCrashed, protocol.ErrPanic, -1}
		// Sessions that fail before their agent starts still have a whole stream.
		want["no-provider"] = outcome{protocol.StatusCrashed, protocol.ErrInternal, 0}
		// In process the stall is the watchdog's: the turn count is not the point here.
		want["stall"] = outcome{protocol.StatusInactivity, protocol.ErrInactivity, -1}
	}
	return want
}

// mixedOptions are the options of a mixed run writing to out.
func mixedOptions(out string, p runner.Providers) runner.Options {
	return runner.Options{
		Out: out, Providers: p, Secrets: []string{apiKey},
		LookupEnv: func(name string) (string, bool) {
			if name == envName {
				return envToken, true
			}
			return "", false
		},
		Environ: []string{"PATH=" + os.Getenv("PATH"), envName + "=" + envToken},
	}
}

func TestRunMixedOutcomes(t *testing.T) {
	t.Parallel()
	scripts := loadScripts(t)
	tests := []struct {
		name     string
		overHTTP bool
	}{
		{name: "in-process"},
		{name: "http", overHTTP: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := writeSpec(t, t.TempDir(), mixedSpec(tt.overHTTP))
			out := filepath.Join(t.TempDir(), "out")
			var opts runner.Options
			if tt.overHTTP {
				p := newOverHTTP(t, scripts)
				p.fakes["crash"] = panicking("provider exploded")
				opts = mixedOptions(out, p)
				opts.Throttled = p.Throttled
			} else {
				p := newInProcess(scripts)
				p.fakes["crash"] = panicking("provider exploded")
				p.firstByte["slow"] = time.Minute
				opts = mixedOptions(out, p)
			}

			sum, err := newRunner(t, opts).Run(context.Background(), spec)
			require.NoError(t, err)
			results := verifyOut(t, out, sum, apiKey, envToken)

			want := mixedWant(tt.overHTTP)
			require.Len(t, sum.Sessions, len(want))
			for key, w := range want {
				res := results[key]
				require.NotNil(t, res, key)
				assert.Equal(t, w.status, res.Status, "%s: %+v", key, res.Error)
				if w.errKind == "" {
					assert.Nil(t, res.Error, key)
				} else if assert.NotNil(t, res.Error, key) {
					assert.Equal(t, w.errKind, res.Error.Kind, "%s: %s", key, res.Error.Message)
				}
				if w.turns >= 0 {
					assert.Equal(t, w.turns, res.NumTurns, key)
				}
			}
			assert.Equal(t, 1, sum.ExitCode(false), "a failed session makes exit code 1")
			assert.Equal(t, 130, sum.ExitCode(true))
			assert.False(t, sum.Totals.BudgetExhausted)

			assertMixedDetails(t, out, results, tt.overHTTP)
			if tt.overHTTP {
				assert.Positive(t, sum.Totals.ThrottledMS, "the 429s paused the shared limiter")
				assert.Positive(t, sum.Totals.ThrottlePauses)
				for _, key := range []string{"rate-limit.r1", "rate-limit.r2", "rate-limit.r3", "rate-limit-openai"} {
					retries := 0
					for _, m := range readEvents(t, filepath.Join(out, runner.SessionsDir, key, runner.StreamFile), false) {
						if m.Kind == protocol.KindRetry {
							retries++
							assert.Contains(t, m.Reason, protocol.ErrRateLimit, key)
						}
					}
					assert.Equal(t, 2, retries, "%s: each 429 is a visible retry event", key)
				}
			}
		})
	}
}

// assertMixedDetails checks what the mixed run's results say beyond their status.
func assertMixedDetails(t *testing.T, out string, results map[string]*protocol.Result, overHTTP bool) {
	t.Helper()
	success := results["success"]
	assert.Equal(t, "Done: notes/success.txt written.", success.Result)
	assert.Equal(t, protocol.StopEndTurn, success.StopReason)
	assert.Positive(t, success.Usage.Output)
	if overHTTP {
		assert.Nil(t, success.TotalCostUSD, "an unpriced model has no cost")
	} else if assert.NotNil(t, success.TotalCostUSD) {
		assert.Zero(t, *success.TotalCostUSD, "the built-in scripted model is free")
	}

	checks := results["checks"].Checks
	if assert.Len(t, checks, 2) {
		assert.Equal(t, protocol.Check{Name: "notes", Passed: true, ExitCode: 0, DurationMS: checks[0].DurationMS, Output: checks[0].Output}, checks[0])
		assert.False(t, checks[1].Passed)
		assert.Equal(t, 3, checks[1].ExitCode)
		assert.Contains(t, checks[1].Output, "checking")
		assert.Contains(t, checks[1].Output, "broken")
	}
	assert.Contains(t, results["checks"].Error.Message, "broken")

	assert.Nil(t, nonNull(results["schema-bad"].StructuredOutput))
	assert.JSONEq(t, `{"answer": 42, "reason": "computed"}`, string(results["schema-good"].StructuredOutput))

	if !overHTTP {
		assert.Contains(t, results["no-provider"].Error.Message, `no script for model "unscripted"`)
	}
	crash := results["crash"]
	assert.Contains(t, crash.Error.Message, "provider exploded")
	if !overHTTP {
		assert.Contains(t, results["panic"].Error.Message, "scripted model exploded")
	}

	budget := results["budget"]
	if assert.NotNil(t, budget.TotalCostUSD) {
		assert.InDelta(t, 2.0, *budget.TotalCostUSD, 1e-9, "1,000 + 1,000 tokens at $1,000 per million")
	}

	retry := results["retry"]
	assert.Equal(t, 2, retry.Attempts)
	assert.Equal(t, 1, retry.Retries)
	first := filepath.Join(out, runner.SessionsDir, "retry", "attempts", "1")
	var failed protocol.Result
	readJSON(t, filepath.Join(first, runner.ResultFile), &failed)
	assert.Equal(t, protocol.StatusProvider, failed.Status)
	assert.Equal(t, 1, failed.Attempts)
	events := readEvents(t, filepath.Join(first, runner.StreamFile), false)
	assert.Equal(t, protocol.KindResult, events[len(events)-1].Kind, "the kept attempt ends with its result")

	secret := results["secret"]
	assert.Contains(t, secret.Result, "Saved "+"***")
	if assert.Len(t, secret.Checks, 1) {
		assert.Equal(t, "token=***", strings.TrimSpace(secret.Checks[0].Output))
	}
	assert.Contains(t, results["auth"].Error.Message, "invalid x-api-key ***")
}

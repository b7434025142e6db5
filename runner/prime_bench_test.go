package runner_test

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/transport/scripted"
)

// primeLatency is the scripted model's time to first byte in BenchmarkPrime: the
// time-to-first-token that priming may add to a run at most.
const primeLatency = time.Second

// BenchmarkPrime runs 100 sessions of one model call each, 100 at a time, with a
// shared prefix of about 4,000 tokens (system prompt), against the scripted model
// behind loopback HTTP with Anthropic's prompt cache modelled (an entry readable once
// the answer that wrote it has begun) and a second to first byte: once with priming
// (the default) and once with cache: {prime: false}. It reports how many sessions
// wrote the shared prefix to the cache in each run, how much less the first turns'
// input cost with priming (at Anthropic's multipliers: 1.25 for a cache write, 0.1 for
// a read), and the wall time priming added, against the time to first token: the
// median, over the unprimed run's requests, of the time from a request to its first
// text.
func BenchmarkPrime(b *testing.B) {
	const sessions = 100
	script, err := scripted.ParseScript("prime", []byte("steps:\n  - text: Done.\n"))
	if err != nil {
		b.Fatal(err)
	}
	// About 4,000 tokens of system prompt with the agent's own (a token is four bytes
	// to the scripted model).
	extra := strings.Repeat("Follow the house style of the repository in every change. ", 256)
	run := func(b *testing.B, prime bool) (summary *runner.Summary, wall, ttft time.Duration) {
		p := &timedProviders{Providers: newOverHTTPWith(b, scripted.Options{Default: script, FirstByte: primeLatency,
			PromptCache: scripted.PromptCache{TTL: 5 * time.Minute}})}
		dir := b.TempDir()
		spec := writeSpec(b, dir, fmt.Sprintf(`version: 1
concurrency: %d
defaults:
  tools: []
  max_turns: 2
  cache: {prime: %v}
jobs:
  - {id: task, model: claude-sonnet-4-6, repeat: %d, system: %q, prompt: "Task {{ .repeat }}: answer briefly."}
`, sessions, prime, sessions, extra))
		r := newRunner(b, runner.Options{Out: filepath.Join(dir, "out"), Providers: p})
		start := time.Now()
		sum, err := r.Run(context.Background(), spec)
		wall = time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if sum.Totals.Passed != sessions {
			b.Fatalf("%d of %d sessions passed", sum.Totals.Passed, sessions)
		}
		return sum, wall, p.medianTTFT()
	}
	// Each iteration runs the pair five times and reports the median wall times: the
	// difference is about one second, the noise of a loaded machine tens of ms.
	const pairs = 5
	for b.Loop() {
		var added, ttfts []time.Duration
		var unprimed, primed *runner.Summary
		var wallU, wallP time.Duration
		for range pairs {
			var ttft time.Duration
			unprimed, wallU, ttft = run(b, false)
			primed, wallP, _ = run(b, true)
			added, ttfts = append(added, wallP-wallU), append(ttfts, ttft)
		}
		slices.Sort(added)
		slices.Sort(ttfts)
		// The shared prefix is what a session that wrote nothing of it read.
		var prefix int64
		for _, row := range primed.Sessions {
			prefix = max(prefix, row.Usage.CacheRead)
		}
		writes := func(s *runner.Summary) int {
			n := 0
			for _, row := range s.Sessions {
				if row.Usage.CacheCreation >= prefix {
					n++
				}
			}
			return n
		}
		cost := func(u protocol.Usage) float64 {
			return float64(u.Input) + 1.25*float64(u.CacheCreation) + 0.1*float64(u.CacheRead)
		}
		b.ReportMetric(float64(prefix), "prefix-tokens")
		b.ReportMetric(float64(writes(primed)), "prefix-writes-primed")
		b.ReportMetric(float64(writes(unprimed)), "prefix-writes-unprimed")
		b.ReportMetric(100*(1-cost(primed.Totals.Usage)/cost(unprimed.Totals.Usage)), "%-input-cost-saved")
		b.ReportMetric(float64(added[pairs/2].Milliseconds()), "added-wall-ms")
		b.ReportMetric(float64(ttfts[pairs/2].Milliseconds()), "ttft-ms")
		b.ReportMetric(float64(added[pairs/2])/float64(ttfts[pairs/2]), "added-wall/ttft")
		b.ReportMetric(wallU.Seconds(), "wall-unprimed-s")
		b.ReportMetric(wallP.Seconds(), "wall-primed-s")
	}
}

// timedProviders records the time from each model call to its first text.
type timedProviders struct {
	runner.Providers
	mu   sync.Mutex
	ttft []time.Duration
}

func (t *timedProviders) Provider(s jobs.Session, live runner.Liveness) (agent.Provider, runner.ProviderInfo, error) {
	p, info, err := t.Providers.Provider(s, live)
	return firstText{Provider: p, t: t}, info, err
}

func (t *timedProviders) medianTTFT() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.ttft) == 0 {
		return 0
	}
	slices.Sort(t.ttft)
	return t.ttft[len(t.ttft)/2]
}

type firstText struct {
	agent.Provider
	t *timedProviders
}

func (f firstText) Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
	return func(yield func(protocol.Message) bool) {
		start, seen := time.Now(), false
		for m := range f.Provider.Stream(ctx, req) {
			if !seen && m.Kind == protocol.KindText {
				seen = true
				f.t.mu.Lock()
				f.t.ttft = append(f.t.ttft, time.Since(start))
				f.t.mu.Unlock()
			}
			if !yield(m) {
				return
			}
		}
	}
}

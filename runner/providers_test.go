package runner_test

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/openai"
	"github.com/agentrun/agentrun/transport/scripted"
)

// loadScripts parses every script of testdata/scripts, named by file name without .yaml.
// A job selects its script with its model name.
func loadScripts(tb testing.TB) map[string]*scripted.Script {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "scripts", "*.yaml"))
	require.NoError(tb, err)
	require.NotEmpty(tb, paths)
	out := map[string]*scripted.Script{}
	for _, p := range paths {
		s, err := scripted.LoadScript(p)
		require.NoError(tb, err, p)
		out[strings.TrimSuffix(filepath.Base(p), ".yaml")] = s
	}
	return out
}

// scriptsWith is loadScripts and one more script, name, of the YAML text script.
func scriptsWith(tb testing.TB, name, script string, more ...string) map[string]*scripted.Script {
	tb.Helper()
	require.Zero(tb, len(more)%2, "more are pairs of a name and a script")
	scripts := loadScripts(tb)
	pairs := append([]string{name, script}, more...)
	for i := 0; i < len(pairs); i += 2 {
		s, err := scripted.ParseScript(pairs[i], []byte(pairs[i+1]))
		require.NoError(tb, err)
		scripts[pairs[i]] = s
	}
	return scripts
}

// fakeProvider is a function-field fake of agent.Provider.
type fakeProvider struct {
	stream func(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message]
}

func (f fakeProvider) Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
	return f.stream(ctx, req)
}

// panicking is a provider that panics as soon as the agent reads its stream.
func panicking(msg string) agent.Provider {
	return fakeProvider{stream: func(context.Context, protocol.Request) iter.Seq[protocol.Message] {
		return func(func(protocol.Message) bool) { panic(msg) }
	}}
}

// gated answers with one text once release is closed; until then, entered receives the
// session's model name each time a call starts waiting.
func gated(entered chan<- string, release <-chan struct{}) agent.Provider {
	return fakeProvider{stream: func(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
		return func(yield func(protocol.Message) bool) {
			select {
			case entered <- req.Model:
			case <-release: // once released, nobody waits for entries
			case <-ctx.Done():
			}
			select {
			case <-release:
			case <-ctx.Done():
				yield(protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrCancelled, Message: "cancelled"}})
				return
			}
			if yield(protocol.Message{Kind: protocol.KindText, Text: "released"}) {
				yield(protocol.Message{Kind: protocol.KindStop, Stop: "end_turn"})
			}
		}
	}}
}

// calls counts the provider requests of a run by session key and lets a test wait
// until a number of sessions have asked for their provider.
type calls struct {
	mu      sync.Mutex
	byKey   map[string]int
	total   int
	waitFor int
	reached chan struct{}
}

func newCalls() *calls { return &calls{byKey: map[string]int{}, reached: make(chan struct{})} }

// notifyAt makes reached close once n providers have been made.
func (c *calls) notifyAt(n int) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waitFor = n
	return c.reached
}

func (c *calls) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byKey[key]++
	c.total++
	if c.waitFor > 0 && c.total == c.waitFor {
		close(c.reached)
	}
}

// keys returns the sessions that asked for a provider, and how often.
func (c *calls) keys() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.byKey))
	for k, v := range c.byKey {
		out[k] = v
	}
	return out
}

// inProcess serves every session from its own in-process scripted model, whose script
// is the one named by the session's model; fakes replace a model name by another
// provider. A session keeps its model across whole-session retries, so scripted faults
// count its attempts.
type inProcess struct {
	scripts map[string]*scripted.Script
	// firstByte delays every response of a model name.
	firstByte map[string]time.Duration
	fakes     map[string]agent.Provider
	calls     *calls

	mu     sync.Mutex
	models map[string]*scripted.Model
}

func newInProcess(scripts map[string]*scripted.Script) *inProcess {
	return &inProcess{scripts: scripts, firstByte: map[string]time.Duration{}, fakes: map[string]agent.Provider{},
		calls: newCalls(), models: map[string]*scripted.Model{}}
}

func (p *inProcess) Provider(s jobs.Session, _ runner.Liveness) (agent.Provider, runner.ProviderInfo, error) {
	p.calls.add(s.Key)
	info := runner.ProviderInfo{Name: "scripted", Model: s.Settings.Model}
	if f, ok := p.fakes[s.Settings.Model]; ok {
		return f, info, nil
	}
	script, ok := p.scripts[s.Settings.Model]
	if !ok {
		return nil, info, fmt.Errorf("no script for model %q", s.Settings.Model)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.models[s.Key]
	if !ok {
		m = scripted.New(scripted.Options{Default: script, FirstByte: p.firstByte[s.Settings.Model]})
		p.models[s.Key] = m
	}
	return m, info, nil
}

// overHTTP serves every session from one scripted model behind a loopback HTTP server,
// through the real transport client and the Anthropic or OpenAI dialect, wired as
// cmd/agentrun wires a real endpoint: one HTTP client and one Limiter for all sessions,
// the session key in the X-Agentrun-Session header, the session's idle timeout.
type overHTTP struct {
	url     string
	http    *http.Client
	limiter *transport.Limiter
	fakes   map[string]agent.Provider
	calls   *calls
}

func newOverHTTP(t testing.TB, scripts map[string]*scripted.Script) *overHTTP {
	t.Helper()
	return newOverHTTPWith(t, scripted.Options{Scripts: scripts})
}

// newOverHTTPWith serves the scripted model of opts.
func newOverHTTPWith(t testing.TB, opts scripted.Options) *overHTTP {
	t.Helper()
	srv := httptest.NewServer(scripted.New(opts).Handler())
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 128
	p := &overHTTP{url: srv.URL + "/v1", http: &http.Client{Transport: tr}, limiter: transport.NewLimiter(nil),
		fakes: map[string]agent.Provider{}, calls: newCalls()}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return p
}

func (p *overHTTP) Provider(s jobs.Session, live runner.Liveness) (agent.Provider, runner.ProviderInfo, error) {
	p.calls.add(s.Key)
	name := string(s.Settings.Provider)
	if name == "" {
		name = "anthropic"
	}
	info := runner.ProviderInfo{Name: name, Model: s.Settings.Model}
	if f, ok := p.fakes[s.Settings.Model]; ok {
		return f, info, nil
	}
	headers := map[string]string{scripted.SessionHeader: s.Key}
	var d transport.Dialect
	switch name {
	case "anthropic":
		d = anthropic.New(anthropic.Config{BaseURL: p.url, Headers: headers})
	case "openai":
		d = openai.New(openai.Config{BaseURL: p.url, Headers: headers})
	default:
		return nil, info, fmt.Errorf("provider %q is not served", name)
	}
	return transport.NewClient(d, transport.Options{
		MaxAttempts: 3, BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond, MaxWait: 5 * time.Second,
		HTTP: p.http, Limiter: p.limiter, Activity: live.Activity, IdleTimeout: live.Idle,
	}), info, nil
}

// Throttled reports the shared limiter's pauses, as cmd/agentrun's providers do.
func (p *overHTTP) Throttled() (time.Duration, int) { return p.limiter.Throttled() }

// Paced reports how long the shared limiter held requests back.
func (p *overHTTP) Paced() time.Duration { return p.limiter.Paced() }

// writeSpec writes a job spec into dir and loads it.
func writeSpec(t testing.TB, dir, yaml string) *jobs.Spec {
	t.Helper()
	path := filepath.Join(dir, "jobs.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
	spec, err := jobs.Load(path, nil)
	require.NoError(t, err)
	return spec
}

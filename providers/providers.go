// Package providers maps each session's provider settings (flags over environment over
// spec over defaults) to the model client it talks to, pooling one HTTP connection pool
// and one rate-limit limiter per endpoint across the sessions of a process.
package providers

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/openai"
	"github.com/agentrun/agentrun/transport/responses"
	"github.com/agentrun/agentrun/transport/scripted"
)

// Compile-time checks that every provider fits the agent's interface.
var (
	_ agent.Provider = (*transport.Client)(nil)
	_ agent.Provider = (*scripted.Model)(nil)
)

// Default models per provider.
var defaultModels = map[string]string{
	"anthropic": "claude-sonnet-4-6",
	"openai":    "gpt-5.4",
	"responses": "gpt-5.4",
	"scripted":  "scripted",
}

// Overrides are provider settings from flags, which win over everything.
type Overrides struct {
	Provider, Model, BaseURL string
}

// providerChoice is a resolved provider for one session.
type providerChoice struct {
	name, model, baseURL, key, script string
	// fallback is true when nothing named or configured a provider, so that the
	// scripted model stands in.
	fallback bool
}

// Pool builds each session's provider. Sessions that talk to the same endpoint
// share one HTTP connection pool and one rate-limit backpressure limiter.
type Pool struct {
	cfg   Config
	flags Overrides
	log   *zap.Logger

	// Wrap, when set before the first session, wraps the HTTP transport of every endpoint (the trace context
	// sent with model requests).
	Wrap func(http.RoundTripper) http.RoundTripper

	mu        sync.Mutex
	endpoints map[string]*endpoint
	models    map[string]*scripted.Model
	noted     bool
}

type endpoint struct {
	http    *http.Client
	limiter *transport.Limiter
}

// New returns the pool of the environment's settings and the flags'; log hears once
// that the scripted model stands in for a real one.
func New(cfg Config, flags Overrides, log *zap.Logger) *Pool {
	return &Pool{cfg: cfg, flags: flags, log: log, endpoints: map[string]*endpoint{}, models: map[string]*scripted.Model{}}
}

var _ runner.Providers = (*Pool)(nil)

// resolve chooses the provider of a session's settings, by the precedence flags >
// environment > job spec > defaults.
func (p *Pool) resolve(set jobs.Resolved) (providerChoice, error) {
	specProvider, specModel, specBaseURL := string(set.Provider), set.Model, set.BaseURL
	c := providerChoice{script: set.Script}
	c.name = cmp.Or(p.flags.Provider, p.cfg.Provider, specProvider)
	model := cmp.Or(p.flags.Model, p.cfg.Model, specModel)
	anthropicSet := p.cfg.AnthropicKey != "" || p.cfg.AnthropicBase != ""
	openaiSet := p.cfg.OpenAIKey != "" || p.cfg.OpenAIBase != ""
	if c.name == "" {
		// A model name says which provider it belongs to, when that provider is set up.
		// Sending it to the other provider's official API cannot work, so that is a
		// usage error naming the missing key; a base URL (a compatible proxy) may serve
		// any model name.
		switch {
		case strings.HasPrefix(model, "claude") && anthropicSet:
			c.name = "anthropic"
		case isOpenAIModel(model) && openaiSet:
			c.name = "openai"
		case strings.HasPrefix(model, "claude") && openaiSet && p.cfg.OpenAIBase == "":
			return c, usagef("model %s is an Anthropic model: set ANTHROPIC_API_KEY, or name the provider with --provider", model)
		case isOpenAIModel(model) && anthropicSet && p.cfg.AnthropicBase == "":
			return c, usagef("model %s is an OpenAI model: set OPENAI_API_KEY, or name the provider with --provider", model)
		}
	}
	if c.name == "" {
		switch {
		case anthropicSet:
			c.name = "anthropic"
		case openaiSet:
			c.name = "openai"
		case p.cfg.CI && model != "" && model != "scripted":
			// In CI a green run of the scripted model would pass for the real one.
			return c, usagef("model %s needs an API key, and none is set: set %s (in CI, where $CI or $GITHUB_ACTIONS is set, "+
				"agentrun does not stand its scripted model in for a real one; write provider: scripted, or pass --provider scripted, to mean it)",
				model, keyFor(model))
		default:
			c.name, c.fallback = "scripted", true
			p.noteScripted()
		}
	}
	if _, ok := defaultModels[c.name]; !ok {
		return c, usagef("unknown provider %q: want anthropic, openai, responses or scripted", c.name)
	}
	c.model = cmp.Or(model, defaultModels[c.name])
	switch c.name {
	case "anthropic":
		c.baseURL = cmp.Or(p.flags.BaseURL, p.cfg.AnthropicBase, specBaseURL)
		c.key = p.cfg.AnthropicKey
		if c.key == "" && c.baseURL == "" {
			return c, usagef("provider anthropic needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a keyless compatible server)")
		}
	case "openai", "responses":
		c.baseURL = cmp.Or(p.flags.BaseURL, p.cfg.OpenAIBase, specBaseURL)
		c.key = p.cfg.OpenAIKey
		if c.key == "" && c.baseURL == "" {
			return c, usagef("provider %s needs OPENAI_API_KEY (or OPENAI_BASE_URL for a keyless compatible server)", c.name)
		}
	}
	return c, nil
}

// override returns the value that the command line or the environment gives the
// setting "provider" or "model" over the spec's, where it comes from ("--model X",
// "AGENTRUN_MODEL=X") and how to take it back; "" when neither gives one.
func (p *Pool) override(setting string) (value, source, undo string) {
	flag, env, name := p.flags.Model, p.cfg.Model, "AGENTRUN_MODEL"
	if setting == "provider" {
		flag, env, name = p.flags.Provider, p.cfg.Provider, "AGENTRUN_PROVIDER"
	}
	switch {
	case flag != "":
		return flag, "--" + setting + " " + flag, "drop --" + setting
	case env != "":
		return env, name + "=" + env, "unset " + name
	}
	return "", "", ""
}

// checkMatrix refuses an override of a setting that a session's matrix chooses: the
// session's key would name one model (or provider) while it ran another.
func (p *Pool) checkMatrix(sessions []jobs.Session) error {
	for _, setting := range []string{"provider", "model"} {
		value, source, undo := p.override(setting)
		if value == "" {
			continue
		}
		var lines []string
		example, more := "", 0
		for _, s := range sessions {
			chosen, ok := s.Matrix[setting]
			switch {
			case !ok || chosen == value:
				continue
			case example == "":
				example = "*+" + setting + "=" + chosen + "*"
			}
			if len(lines) < maxListed {
				lines = append(lines, fmt.Sprintf("  session %s: its matrix chooses %s %s", s.Key, setting, chosen))
			} else {
				more++
			}
		}
		if more > 0 {
			lines = append(lines, fmt.Sprintf("  and %d more", more))
		}
		if len(lines) > 0 {
			return usagef("%s would change the %s of sessions whose keys name theirs:\n%s\n%s, and pick sessions with --filter (such as --filter '%s')",
				source, setting, strings.Join(lines, "\n"), undo, example)
		}
	}
	return nil
}

// maxListed is how many sessions a message lists.
const maxListed = 5

// noteScripted says once that no provider is configured.
func (p *Pool) noteScripted() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.noted {
		p.noted = true
		p.log.Info("no API key or base URL configured: using the built-in scripted model " +
			"(set ANTHROPIC_API_KEY or OPENAI_API_KEY to use a real one)")
	}
}

// keyFor names the variable that would give model a provider.
func keyFor(model string) string {
	switch {
	case strings.HasPrefix(model, "claude"):
		return "ANTHROPIC_API_KEY"
	case isOpenAIModel(model):
		return "OPENAI_API_KEY"
	}
	return "ANTHROPIC_API_KEY or OPENAI_API_KEY"
}

// fallbackWarning is the summaries' banner for a run in which the scripted model stood
// in for a real one; models are the model names those sessions give.
func fallbackWarning(models []string) string {
	named := ""
	if len(models) > 0 {
		named = " (models named: " + strings.Join(models, ", ") + ")"
	}
	return "No API key or base URL is set, so the built-in scripted model stood in for a real one in every session " +
		"that names no provider" + named + ". Set ANTHROPIC_API_KEY or OPENAI_API_KEY to use a real model, " +
		"or write provider: scripted to mean it."
}

// isOpenAIModel recognises OpenAI's model families.
func isOpenAIModel(m string) bool {
	for _, p := range []string{"gpt-", "o1", "o3", "o4", "chatgpt-", "codex-"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// Resolve names the provider and model of s without making the provider
// (runner.Options.Resolve).
func (p *Pool) Resolve(s jobs.Session) (runner.ProviderInfo, error) {
	c, err := p.resolve(s.Settings)
	return runner.ProviderInfo{Name: c.name, Model: c.model}, err
}

// Provider implements runner.Providers.
func (p *Pool) Provider(s jobs.Session, live runner.Liveness) (agent.Provider, runner.ProviderInfo, error) {
	c, err := p.resolve(s.Settings)
	if err != nil {
		return nil, runner.ProviderInfo{}, err
	}
	prov, err := p.build(c, s.Key, live)
	return prov, runner.ProviderInfo{Name: c.name, Model: c.model, Server: serverOf(c)}, err
}

// build makes the provider of a choice. sessionKey travels in a header so a fake
// server can tell sessions apart; live is the attempt's idle bound and activity
// callback, which the runner sets.
func (p *Pool) build(c providerChoice, sessionKey string, live runner.Liveness) (agent.Provider, error) {
	if c.name == "scripted" {
		m, err := p.scripted(c.script)
		if err != nil {
			return nil, err
		}
		// The transport's retry loop, backoff and limiter, as for an HTTP provider: a
		// fault behaves the same in process as over fake-server.
		ep := p.endpoint("scripted " + c.script)
		return transport.NewLocal(m, transport.Options{Limiter: ep.limiter, Activity: live.Activity}), nil
	}
	headers := map[string]string{"X-Agentrun-Session": sessionKey}
	var d transport.Dialect
	switch c.name {
	case "anthropic":
		d = anthropic.New(anthropic.Config{BaseURL: c.baseURL, APIKey: c.key, Headers: headers})
	case "openai":
		d = openai.New(openai.Config{BaseURL: c.baseURL, APIKey: c.key, Headers: headers})
	case "responses":
		d = responses.New(responses.Config{BaseURL: c.baseURL, APIKey: c.key, Headers: headers})
	}
	ep := p.endpoint(c.name + " " + c.baseURL)
	return transport.NewClient(d, transport.Options{HTTP: ep.http, Limiter: ep.limiter,
		IdleTimeout: live.Idle, Activity: live.Activity}), nil
}

// scripted returns the in-process scripted model of a script ("" is the demo policy).
func (p *Pool) scripted(script string) (*scripted.Model, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.models[script]; ok {
		return m, nil
	}
	opts := scripted.Options{}
	if script != "" {
		s, err := scripted.LoadScript(script)
		if err != nil {
			// A broken script is a mistake in the spec or on the command line.
			return nil, usagef("scripted model: %w", err)
		}
		opts.Default = s
	}
	m := scripted.New(opts)
	p.models[script] = m
	return m, nil
}

func (p *Pool) endpoint(key string) *endpoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ep, ok := p.endpoints[key]; ok {
		return ep
	}
	ep := &endpoint{http: transport.NewHTTPClient(transport.Options{}), limiter: transport.NewLimiter(nil)}
	if p.Wrap != nil {
		ep.http.Transport = p.Wrap(ep.http.Transport)
	}
	p.endpoints[key] = ep
	return ep
}

// Throttled sums the pauses of every endpoint.
func (p *Pool) Throttled() (time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var total time.Duration
	var n int
	for _, ep := range p.endpoints {
		d, c := ep.limiter.Throttled()
		total += d
		n += c
	}
	return total, n
}

// Paced sums the time every endpoint's limiter held requests back.
func (p *Pool) Paced() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var total time.Duration
	for _, ep := range p.endpoints {
		total += ep.limiter.Paced()
	}
	return total
}

// Close drops idle connections.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ep := range p.endpoints {
		ep.http.CloseIdleConnections()
	}
}

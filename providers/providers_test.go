package providers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/testexit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit))
}

// session is a session of the given provider settings.
func session(provider, model, baseURL string) jobs.Session {
	return jobs.Session{Key: "s", Settings: jobs.Resolved{Provider: jobs.Provider(provider), Model: model, BaseURL: baseURL}}
}

// TestResolve checks the precedence flags > environment > spec > defaults, the
// provider a model name implies, and the usage errors of a setup that cannot work.
func TestResolve(t *testing.T) {
	t.Parallel()
	anthropicKey := Config{AnthropicKey: "sk-ant-k"}
	openaiKey := Config{OpenAIKey: "sk-k"}
	both := Config{AnthropicKey: "sk-ant-k", OpenAIKey: "sk-k"}
	tests := map[string]struct {
		cfg     Config
		flags   Overrides
		session jobs.Session
		want    runner.ProviderInfo
		// wantErr is a text of the usage error; "" means none.
		wantErr string
	}{
		"nothing configured: the scripted model": {
			want: runner.ProviderInfo{Name: "scripted", Model: "scripted"},
		},
		"a key: its provider and default model": {
			cfg: anthropicKey, want: runner.ProviderInfo{Name: "anthropic", Model: "claude-sonnet-4-6"},
		},
		"the spec's provider": {
			cfg: both, session: session("responses", "", ""), want: runner.ProviderInfo{Name: "responses", Model: "gpt-5.4"},
		},
		"the environment over the spec": {
			cfg:     Config{OpenAIKey: "sk-k", Provider: "openai", Model: "gpt-5.4-mini"},
			session: session("anthropic", "claude-opus-4-6", ""),
			want:    runner.ProviderInfo{Name: "openai", Model: "gpt-5.4-mini"},
		},
		"flags over the environment": {
			cfg:   Config{AnthropicKey: "sk-ant-k", OpenAIKey: "sk-k", Provider: "openai", Model: "gpt-5.4"},
			flags: Overrides{Provider: "anthropic", Model: "claude-opus-4-6"},
			want:  runner.ProviderInfo{Name: "anthropic", Model: "claude-opus-4-6"},
		},
		"a Claude model picks anthropic": {
			cfg: both, session: session("", "claude-haiku-4-5", ""), want: runner.ProviderInfo{Name: "anthropic", Model: "claude-haiku-4-5"},
		},
		"a GPT model picks openai": {
			cfg: both, session: session("", "gpt-5.4", ""), want: runner.ProviderInfo{Name: "openai", Model: "gpt-5.4"},
		},
		"a GPT model with only the Anthropic key": {
			cfg: anthropicKey, session: session("", "gpt-5.4", ""), wantErr: "model gpt-5.4 is an OpenAI model: set OPENAI_API_KEY",
		},
		"a Claude model with only the OpenAI key": {
			cfg: openaiKey, session: session("", "claude-sonnet-4-6", ""), wantErr: "is an Anthropic model: set ANTHROPIC_API_KEY",
		},
		"a Claude model through an OpenAI-compatible proxy": {
			cfg: Config{OpenAIBase: "http://127.0.0.1:1"}, session: session("", "claude-sonnet-4-6", ""),
			want: runner.ProviderInfo{Name: "openai", Model: "claude-sonnet-4-6"},
		},
		"CI never stands the scripted model in": {
			cfg: Config{CI: true}, session: session("", "claude-sonnet-4-6", ""), wantErr: "needs an API key, and none is set: set ANTHROPIC_API_KEY",
		},
		"CI, the scripted model asked for": {
			cfg: Config{CI: true}, session: session("scripted", "", ""), want: runner.ProviderInfo{Name: "scripted", Model: "scripted"},
		},
		"an unknown provider": {
			session: session("bedrock", "", ""), wantErr: `unknown provider "bedrock"`,
		},
		"a provider without its key": {
			cfg: anthropicKey, session: session("openai", "", ""), wantErr: "provider openai needs OPENAI_API_KEY",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := New(tt.cfg, tt.flags, zap.NewNop())
			defer p.Close()
			got, err := p.Resolve(tt.session)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrUsage)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.NotContains(t, err.Error(), "sk-", "no key in the message")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestPooling checks that sessions of one endpoint share its connection pool and
// limiter, and that another base URL gets its own.
func TestPooling(t *testing.T) {
	t.Parallel()
	p := New(Config{AnthropicKey: "sk-ant-k"}, Overrides{}, zap.NewNop())
	defer p.Close()
	for _, s := range []jobs.Session{session("", "", ""), session("", "claude-opus-4-6", ""), session("", "", "http://127.0.0.1:1")} {
		prov, info, err := p.Provider(s, runner.Liveness{})
		require.NoError(t, err)
		require.NotNil(t, prov)
		assert.Equal(t, "anthropic", info.Name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	assert.Len(t, p.endpoints, 2, "one endpoint per provider and base URL")
}

// TestProviderServer checks the server a provider's spans name: the base URL's host
// and port, the official API's by default, none for the scripted model.
func TestProviderServer(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		cfg  Config
		want string
	}{
		"the official Anthropic API": {cfg: Config{AnthropicKey: "sk-ant-k"}, want: "api.anthropic.com:443"},
		"the official OpenAI API":    {cfg: Config{OpenAIKey: "sk-k"}, want: "api.openai.com:443"},
		"a base URL over http":       {cfg: Config{OpenAIBase: "http://127.0.0.1/v1"}, want: "127.0.0.1:80"},
		"a base URL with its port":   {cfg: Config{AnthropicBase: "https://proxy.example:8443"}, want: "proxy.example:8443"},
		"the scripted model":         {want: ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := New(tt.cfg, Overrides{}, zap.NewNop())
			defer p.Close()
			_, info, err := p.Provider(session("", "", ""), runner.Liveness{})
			require.NoError(t, err)
			assert.Equal(t, tt.want, info.Server)
		})
	}
}

// TestCheck checks the run's check of every session: the first bad session is named,
// a broken script stops the run, and the fallback to the scripted model is said once,
// naming the models the sessions gave, and noted once in the log.
func TestCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.yaml")
	require.NoError(t, os.WriteFile(broken, []byte("steps:\n  - text: hi\n    stop: sideways\n"), 0o644))

	t.Run("fallback", func(t *testing.T) {
		t.Parallel()
		core, logs := observer.New(zap.InfoLevel)
		p := New(Config{}, Overrides{}, zap.New(core))
		defer p.Close()
		warnings, err := p.Check([]jobs.Session{session("", "claude-sonnet-4-6", ""), session("", "gpt-5.4", ""),
			session("", "claude-sonnet-4-6", ""), session("", "", "")})
		require.NoError(t, err)
		require.Len(t, warnings, 1)
		assert.Contains(t, warnings[0], "(models named: claude-sonnet-4-6, gpt-5.4)")
		assert.Equal(t, 1, logs.FilterMessageSnippet("using the built-in scripted model").Len(), "noted once")
	})
	t.Run("no fallback", func(t *testing.T) {
		t.Parallel()
		p := New(Config{AnthropicKey: "sk-ant-k"}, Overrides{}, zap.NewNop())
		defer p.Close()
		warnings, err := p.Check([]jobs.Session{session("", "", ""), session("scripted", "", "")})
		require.NoError(t, err)
		assert.Empty(t, warnings)
	})
	t.Run("a broken script", func(t *testing.T) {
		t.Parallel()
		p := New(Config{}, Overrides{}, zap.NewNop())
		defer p.Close()
		s := session("scripted", "", "")
		s.Key, s.Settings.Script = "bad", broken
		_, err := p.Check([]jobs.Session{session("scripted", "", ""), s})
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrUsage)
		assert.Contains(t, err.Error(), "session bad: scripted model: ")
		assert.Contains(t, err.Error(), broken+":3:11")
	})
	t.Run("an override against a matrix", func(t *testing.T) {
		t.Parallel()
		p := New(Config{Model: "claude-opus-4-6"}, Overrides{}, zap.NewNop())
		defer p.Close()
		s := session("", "gpt-5.4", "")
		s.Key, s.Matrix = "a+model=gpt-5.4", map[string]string{"model": "gpt-5.4"}
		_, err := p.Check([]jobs.Session{s})
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrUsage)
		assert.Contains(t, err.Error(), "AGENTRUN_MODEL=claude-opus-4-6 would change the model of sessions whose keys name theirs")
		assert.Contains(t, err.Error(), "session a+model=gpt-5.4: its matrix chooses model gpt-5.4")
	})
}

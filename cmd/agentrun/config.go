package main

import (
	"fmt"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/caarlos0/env/v11"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/providers"
)

// envConfig is agentrun's configuration from the environment. Flags override it; it
// overrides the job spec; the spec overrides the built-in defaults.
type envConfig struct {
	Home        string `env:"AGENTRUN_HOME"`
	Provider    string `env:"AGENTRUN_PROVIDER"`
	Model       string `env:"AGENTRUN_MODEL"`
	Out         string `env:"AGENTRUN_OUT"`
	Concurrency int    `env:"AGENTRUN_CONCURRENCY"`
	LogFormat   string `env:"AGENTRUN_LOG_FORMAT"`
	LogLevel    string `env:"AGENTRUN_LOG_LEVEL" envDefault:"info"`
	BashMode    string `env:"AGENTRUN_BASH_MODE"`
	// Shard is "I/N"; ShardTotal with JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)
	// gives the same.
	Shard              string `env:"AGENTRUN_SHARD"`
	ShardTotal         int    `env:"AGENTRUN_SHARD_TOTAL"`
	JobCompletionIndex string `env:"JOB_COMPLETION_INDEX"`

	AnthropicKey  string `env:"ANTHROPIC_API_KEY"`
	AnthropicBase string `env:"ANTHROPIC_BASE_URL"`
	OpenAIKey     string `env:"OPENAI_API_KEY"`
	OpenAIBase    string `env:"OPENAI_BASE_URL"`

	// Compact overrides the defaults of the compaction cost model (AGENTRUN_DP_*, after
	// the seed's DP_* variables).
	Compact compactEnv `envPrefix:"AGENTRUN_DP_"`

	GitHubActions bool   `env:"GITHUB_ACTIONS"`
	CI            string `env:"CI"`
	UserHome      string `env:"HOME"`
	// AccountHome is the home of the account agentrun runs as, from the password
	// database: UserHome where $HOME is unset (as a login would set it), and a home
	// whose credential stores the sandbox hides whatever $HOME says.
	AccountHome string
}

// config reads the injected environment.
func (a *App) config() (envConfig, error) {
	var c envConfig
	vars := a.envMap()
	if err := env.ParseWithOptions(&c, env.Options{Environment: vars}); err != nil {
		return c, envProblem(err, vars)
	}
	c.AccountHome = accountHome()
	if c.UserHome == "" {
		c.UserHome = c.AccountHome
	}
	if c.Home == "" {
		c.Home = filepath.Join(c.UserHome, ".agentrun")
	}
	return c, nil
}

// accountHome is the home directory of the account agentrun runs as in the password
// database, "" where it has none (a container's uid without an entry).
func accountHome() string {
	u, err := user.Current()
	if err != nil || !filepath.IsAbs(u.HomeDir) {
		return ""
	}
	return filepath.Clean(u.HomeDir)
}

// inCI reports whether agentrun runs in CI: $CI set to anything but "false", or
// $GITHUB_ACTIONS.
func (c envConfig) inCI() bool {
	return c.CI != "" && c.CI != "false" || c.GitHubActions
}

// providers is the provider settings of the environment.
func (c envConfig) providers() providers.Config {
	return providers.Config{Provider: c.Provider, Model: c.Model, AnthropicKey: c.AnthropicKey,
		AnthropicBase: c.AnthropicBase, OpenAIKey: c.OpenAIKey, OpenAIBase: c.OpenAIBase, CI: c.inCI()}
}

// secretEnv lists the variables that must never reach tool processes or artifacts.
var secretEnv = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"}

// keys returns the configured API keys (for redaction).
func (c envConfig) keys() []string {
	var out []string
	for _, k := range []string{c.AnthropicKey, c.OpenAIKey} {
		if k != "" {
			out = append(out, k)
		}
	}
	return out
}

// toolEnviron is the environment handed to tool processes: ours without API keys, and
// with HOME=home where ours has none.
func (a *App) toolEnviron(home string) []string {
	out := make([]string, 0, len(a.Env)+1)
	hasHome := false
	for _, kv := range a.Env {
		name, _, _ := strings.Cut(kv, "=")
		secret := false
		for _, s := range secretEnv {
			secret = secret || name == s
		}
		hasHome = hasHome || name == "HOME"
		if !secret {
			out = append(out, kv)
		}
	}
	if !hasHome && home != "" {
		out = append(out, "HOME="+home)
	}
	return out
}

// shardFromEnv reads the shard from AGENTRUN_SHARD, or JOB_COMPLETION_INDEX with
// AGENTRUN_SHARD_TOTAL.
func (c envConfig) shardFromEnv() (string, error) {
	switch {
	case c.Shard != "":
		return c.Shard, nil
	case c.JobCompletionIndex != "":
		if c.ShardTotal <= 0 {
			return "", usagef("JOB_COMPLETION_INDEX is set but AGENTRUN_SHARD_TOTAL is not: set it to the Job's completions")
		}
		return fmt.Sprintf("%s/%d", c.JobCompletionIndex, c.ShardTotal), nil
	}
	return "", nil
}

// compactEnv holds the compaction cost model's parameters; zero keeps the default.
type compactEnv struct {
	PInput       float64 `env:"P_INPUT"`
	PCache       float64 `env:"P_CACHE"`
	POut         float64 `env:"P_OUT"`
	V            float64 `env:"V"`
	S            float64 `env:"S"`
	Beta         float64 `env:"BETA"`
	QP           float64 `env:"QUALITY_PENALTY"`
	R            float64 `env:"R"`
	MinKeepRatio float64 `env:"MIN_KEEP_RATIO"`
	BaselineE    float64 `env:"BASELINE_E"`
	EFixed       float64 `env:"E_FIXED"`
	L            float64 `env:"L"`
	Disabled     bool    `env:"DISABLED"`
}

// config returns the compaction settings with maxContext (0 keeps the default).
func (c compactEnv) config(maxContext int64) agent.CompactConfig {
	return agent.CompactConfig{
		Disabled: c.Disabled, MaxContext: maxContext, PInput: c.PInput, PCache: c.PCache, POut: c.POut,
		V: c.V, S: c.S, Beta: c.Beta, QP: c.QP, R: c.R, MinKeepRatio: c.MinKeepRatio,
		BaselineE: c.BaselineE, EFixed: c.EFixed, L: c.L,
	}
}

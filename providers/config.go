package providers

// Config is the provider settings of the environment, which win over a spec's.
type Config struct {
	Provider, Model string // AGENTRUN_PROVIDER, AGENTRUN_MODEL
	// AnthropicKey, AnthropicBase, OpenAIKey and OpenAIBase are ANTHROPIC_API_KEY,
	// ANTHROPIC_BASE_URL, OPENAI_API_KEY and OPENAI_BASE_URL.
	AnthropicKey, AnthropicBase, OpenAIKey, OpenAIBase string
	// CI is true in CI ($CI or $GITHUB_ACTIONS), where the scripted model never stands
	// in for a model that needs a key.
	CI bool
}

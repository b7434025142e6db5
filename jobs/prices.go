package jobs

import "strings"

// Price is what a model costs, in USD per million tokens of each kind.
type Price struct {
	Input      float64 `yaml:"input" json:"input" required:"true" limit:"nonneg" doc:"USD per million input tokens."`
	Output     float64 `yaml:"output" json:"output" required:"true" limit:"nonneg" doc:"USD per million output tokens."`
	CacheRead  float64 `yaml:"cache_read" json:"cache_read" limit:"nonneg" doc:"USD per million input tokens read from the prompt cache (default: the input price)."`
	CacheWrite float64 `yaml:"cache_write" json:"cache_write" limit:"nonneg" doc:"USD per million input tokens written to the prompt cache (default: the input price)."`
}

// Cost returns the cost in USD of the given token counts.
func (p Price) Cost(input, output, cacheRead, cacheWrite int64) float64 {
	return (float64(input)*p.Input + float64(output)*p.Output +
		float64(cacheRead)*p.CacheRead + float64(cacheWrite)*p.CacheWrite) / 1e6
}

// DefaultPrices returns the built-in list prices, as published by Anthropic and OpenAI
// when this table was written (2026-11), for standard (not batch, not priority)
// requests; Anthropic's cache write is the 5-minute rate, and requests over 200k input
// tokens, which some models bill higher, are priced like the rest. Names match exactly
// or as the longest prefix followed by a non-alphanumeric character, so dated model
// ids ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06") find their family. The map
// is new on every call.
func DefaultPrices() map[string]Price {
	anthropic := func(in, out float64) Price {
		return Price{Input: in, Output: out, CacheRead: in / 10, CacheWrite: in * 1.25}
	}
	openai := func(in, cached, out float64) Price {
		return Price{Input: in, Output: out, CacheRead: cached, CacheWrite: in}
	}
	return map[string]Price{
		// Anthropic. The family prefixes carry the newest generation's price; the
		// older, dearer Opus 4.0 and 4.1 are listed by name.
		"claude-opus-4":          anthropic(5, 25),
		"claude-opus-4-5":        anthropic(5, 25),
		"claude-opus-4-6":        anthropic(5, 25),
		"claude-opus-4-1":        anthropic(15, 75),
		"claude-opus-4-0":        anthropic(15, 75),
		"claude-opus-4-20250514": anthropic(15, 75),
		"claude-sonnet-4":        anthropic(3, 15),
		"claude-haiku-4":         anthropic(1, 5),
		"claude-3-7-sonnet":      anthropic(3, 15),
		"claude-3-5-sonnet":      anthropic(3, 15),
		"claude-3-5-haiku":       anthropic(0.8, 4),
		"claude-3-haiku":         anthropic(0.25, 1.25),
		"claude-3-opus":          anthropic(15, 75),
		// OpenAI: input, cached input, output. OpenAI does not bill cache writes
		// separately, so they cost the input price.
		"gpt-5":              openai(1.25, 0.125, 10),
		"gpt-5-mini":         openai(0.25, 0.025, 2),
		"gpt-5-nano":         openai(0.05, 0.005, 0.4),
		"gpt-5-pro":          openai(15, 15, 120),
		"gpt-5-codex":        openai(1.25, 0.125, 10),
		"gpt-5.1":            openai(1.25, 0.125, 10),
		"gpt-5.1-codex":      openai(1.25, 0.125, 10),
		"gpt-5.1-codex-mini": openai(0.25, 0.025, 2),
		"gpt-5.2":            openai(1.75, 0.175, 14),
		"gpt-5.2-pro":        openai(21, 21, 168),
		"gpt-5.3":            openai(1.75, 0.175, 14),
		"gpt-5.4":            openai(2.5, 0.25, 15),
		"gpt-5.4-mini":       openai(0.75, 0.075, 4.5),
		"gpt-5.4-nano":       openai(0.2, 0.02, 1.25),
		"gpt-5.4-pro":        openai(30, 30, 180),
		"gpt-4.1":            openai(2, 0.5, 8),
		"gpt-4.1-mini":       openai(0.4, 0.1, 1.6),
		"gpt-4.1-nano":       openai(0.1, 0.025, 0.4),
		"gpt-4o":             openai(2.5, 1.25, 10),
		"gpt-4o-mini":        openai(0.15, 0.075, 0.6),
		"o1":                 openai(15, 7.5, 60),
		"o1-mini":            openai(1.1, 0.55, 4.4),
		"o3":                 openai(2, 0.5, 8),
		"o3-mini":            openai(1.1, 0.55, 4.4),
		"o3-pro":             openai(20, 20, 80),
		"o4-mini":            openai(1.1, 0.275, 4.4),
		// agentrun's built-in scripted model costs nothing.
		"scripted": {},
	}
}

// LookupPrice finds model in table: by exact name, else by the longest name that is a
// prefix of model followed by a character other than a letter or digit; a
// "vendor/model" name as routers write it ("anthropic/claude-sonnet-4.5") is tried
// without its vendor too.
func LookupPrice(table map[string]Price, model string) (Price, bool) {
	if model == "" {
		return Price{}, false
	}
	if p, ok := table[model]; ok {
		return p, true
	}
	best := ""
	for name := range table {
		if len(name) > len(best) && strings.HasPrefix(model, name) && !alnum(model[len(name)]) {
			best = name
		}
	}
	if best != "" {
		return table[best], true
	}
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		return LookupPrice(table, model[i+1:])
	}
	return Price{}, false
}

// alnum reports whether c is an ASCII letter or digit.
func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// Price returns the price of model: from the spec's prices when one matches there,
// else from DefaultPrices. It reports false for an unknown model, whose cost is
// unknown.
func (s *Spec) Price(model string) (Price, bool) {
	if s != nil {
		if p, ok := LookupPrice(s.Prices, model); ok {
			return p, true
		}
	}
	return LookupPrice(DefaultPrices(), model)
}

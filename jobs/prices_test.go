package jobs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookupPrice(t *testing.T) {
	tests := map[string]struct {
		give      string
		wantIn    float64
		wantOut   float64
		wantFound bool
	}{
		"exact":                     {give: "gpt-4.1-mini", wantIn: 0.4, wantOut: 1.6, wantFound: true},
		"dated id":                  {give: "claude-sonnet-4-5-20250929", wantIn: 3, wantOut: 15, wantFound: true},
		"newest opus by family":     {give: "claude-opus-4-6", wantIn: 5, wantOut: 25, wantFound: true},
		"older dearer opus":         {give: "claude-opus-4-1-20250805", wantIn: 15, wantOut: 75, wantFound: true},
		"opus 4.0 dated":            {give: "claude-opus-4-20250514", wantIn: 15, wantOut: 75, wantFound: true},
		"haiku":                     {give: "claude-haiku-4-5-20251001", wantIn: 1, wantOut: 5, wantFound: true},
		"longest prefix wins":       {give: "gpt-4o-mini-2024-07-18", wantIn: 0.15, wantOut: 0.6, wantFound: true},
		"dotted version":            {give: "gpt-5.4", wantIn: 2.5, wantOut: 15, wantFound: true},
		"mini of a dotted version":  {give: "gpt-5.4-mini", wantIn: 0.75, wantOut: 4.5, wantFound: true},
		"reasoning model":           {give: "o4-mini", wantIn: 1.1, wantOut: 4.4, wantFound: true},
		"vendor prefix":             {give: "openai/gpt-5-mini", wantIn: 0.25, wantOut: 2, wantFound: true},
		"router spelling":           {give: "anthropic/claude-sonnet-4.5", wantIn: 3, wantOut: 15, wantFound: true},
		"prefix must end at a word": {give: "o3x"},
		"unknown":                   {give: "llama3.1:8b"},
		"empty":                     {give: ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p, ok := LookupPrice(DefaultPrices(), tt.give)
			assert.Equal(t, tt.wantFound, ok)
			assert.InDelta(t, tt.wantIn, p.Input, 1e-9)
			assert.InDelta(t, tt.wantOut, p.Output, 1e-9)
		})
	}
}

func TestDefaultPricesAreSane(t *testing.T) {
	for name, p := range DefaultPrices() {
		if name == "scripted" {
			assert.Zero(t, p, "the built-in scripted model is free")
			continue
		}
		assert.Positive(t, p.Input, name)
		assert.GreaterOrEqual(t, p.Output, p.Input, name)
		assert.LessOrEqual(t, p.CacheRead, p.Input, name)
		assert.GreaterOrEqual(t, p.CacheWrite, p.Input, name)
	}
}

func TestCost(t *testing.T) {
	p := Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	assert.InDelta(t, 3+15+0.3+3.75, p.Cost(1e6, 1e6, 1e6, 1e6), 1e-9)
	assert.InDelta(t, 0.0105, p.Cost(1000, 500, 0, 0), 1e-12)
	assert.Zero(t, p.Cost(0, 0, 0, 0))
}

func TestSpecPrices(t *testing.T) {
	give := doc(
		"version: 1",
		"prices:",
		"  local-llama: {input: 0, output: 0}",
		"  claude-sonnet-4: {input: 1, output: 2, cache_read: 0.5}",
		"jobs:",
		"  - id: a",
		"    prompt: hi",
	)
	s := parseOK(t, t.TempDir(), give, nil)

	p, ok := s.Price("local-llama-3.1")
	require.True(t, ok)
	assert.Equal(t, Price{}, p)

	p, ok = s.Price("claude-sonnet-4-6")
	require.True(t, ok, "an override by prefix wins over the built-in table")
	assert.Equal(t, Price{Input: 1, Output: 2, CacheRead: 0.5, CacheWrite: 1}, p, "an absent cache price is the input price")

	p, ok = s.Price("gpt-5")
	require.True(t, ok, "the built-in table still applies")
	assert.InDelta(t, 1.25, p.Input, 1e-9)

	_, ok = s.Price("unknown-model")
	assert.False(t, ok)
}

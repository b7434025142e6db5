package agent

import (
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// Stats are a session's counters, saved as one line of JSON (stats.json) so a resumed
// session continues its totals. Names follow the seed.
type Stats struct {
	UserTurns        int     `json:"current_turn_count"`
	Requests         int     `json:"agent_request_count"`
	CompactRequests  int     `json:"compact_request_count"`
	SubAgentRequests int     `json:"sub_agent_request_count"`
	InputTokens      int64   `json:"total_input_tokens"`
	OutputTokens     int64   `json:"total_output_tokens"`
	CacheRead        int64   `json:"total_cache_read_tokens"`
	CacheCreation    int64   `json:"total_cache_creation_tokens"`
	CurrentContext   int64   `json:"current_context_tokens"`
	CostUSD          float64 `json:"total_cost_usd"`
	CostUnknown      bool    `json:"cost_unknown,omitempty"`
	APIMillis        int64   `json:"total_api_ms"`
	LastUpdated      string  `json:"last_updated"`
}

// Usage returns the token totals.
func (s Stats) Usage() protocol.Usage {
	return protocol.Usage{Input: s.InputTokens, Output: s.OutputTokens, CacheRead: s.CacheRead, CacheCreation: s.CacheCreation}
}

func (s *Stats) add(u protocol.Usage) {
	s.InputTokens += u.Input
	s.OutputTokens += u.Output
	s.CacheRead += u.CacheRead
	s.CacheCreation += u.CacheCreation
}

func (s *Session) saveStats() error {
	if s.deps.Store == nil {
		return nil
	}
	s.stats.LastUpdated = s.deps.Now().UTC().Format(time.RFC3339)
	return s.deps.Store.SaveStats(s.stats)
}

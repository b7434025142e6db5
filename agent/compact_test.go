package agent_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
)

// exchangeWindow is a user prompt followed by n tool exchanges of the given size.
func exchangeWindow(n, size int) []protocol.Turn {
	turns := []protocol.Turn{protocol.UserText("task")}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("t%d", i)
		turns = append(turns,
			protocol.Turn{Role: protocol.RoleAssistant, Blocks: []protocol.Block{{Type: protocol.BlockToolUse, ID: id, Name: "Read", Input: []byte(`{}`)}}},
			protocol.Turn{Role: protocol.RoleUser, Blocks: []protocol.Block{{Type: protocol.BlockToolResult, ToolUseID: id, Content: strings.Repeat("x", size)}}})
	}
	return turns
}

func decisionInput(turns []protocol.Turn, trigger string, ctx int64) agent.DecisionInput {
	tokens := make([]int64, len(turns))
	var total int64
	for i, t := range turns {
		tokens[i] = agent.TurnTokens(t)
		total += tokens[i]
	}
	return agent.DecisionInput{
		Trigger: trigger, TurnTokens: tokens, CutOK: agent.CutPoints(turns),
		UserTurns: 1, Requests: len(turns) / 2, TotalInput: total * int64(len(turns)/2), CurrentContext: ctx,
	}
}

func TestDecide(t *testing.T) {
	tests := map[string]struct {
		give     agent.DecisionInput
		wantKeep bool
		reason   string
	}{
		"empty":                 {give: agent.DecisionInput{}, wantKeep: false},
		"small window":          {give: decisionInput(exchangeWindow(2, 100), agent.TriggerAuto, 500), wantKeep: false},
		"large window":          {give: decisionInput(exchangeWindow(40, 40_000), agent.TriggerAuto, 150_000), wantKeep: true, reason: "cost"},
		"forced small":          {give: decisionInput(exchangeWindow(4, 100), agent.TriggerForced, 500), wantKeep: true, reason: "forced"},
		"overflow":              {give: decisionInput(exchangeWindow(4, 100), agent.TriggerOverflow, 500), wantKeep: true, reason: "forced"},
		"valve just above 90%":  {give: decisionInput(exchangeWindow(4, 100), agent.TriggerAuto, 180_001), wantKeep: true, reason: "valve"},
		"valve exactly at 90%":  {give: decisionInput(exchangeWindow(4, 100), agent.TriggerAuto, 180_000), wantKeep: false},
		"only the user message": {give: decisionInput(exchangeWindow(0, 100), agent.TriggerForced, 500), wantKeep: false},
		"one exchange forced":   {give: decisionInput(exchangeWindow(1, 100), agent.TriggerForced, 500), wantKeep: true, reason: "forced"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d := agent.Decide(tt.give)
			if !tt.wantKeep {
				assert.Zero(t, d.Keep)
				return
			}
			require.Positive(t, d.Keep)
			assert.Less(t, d.Keep, len(tt.give.TurnTokens))
			assert.Equal(t, tt.reason, d.Reason)
			assert.True(t, tt.give.CutOK[len(tt.give.TurnTokens)-d.Keep], "the kept window starts at a valid place")
		})
	}
}

func TestDecideConfig(t *testing.T) {
	in := decisionInput(exchangeWindow(40, 40_000), agent.TriggerAuto, 150_000)
	in.Config.Disabled = false
	expensive := in
	expensive.Config.Beta = 1000 // the information loss outweighs any saving
	assert.Positive(t, agent.Decide(in).Keep)
	assert.Zero(t, agent.Decide(expensive).Keep)
}

// randomWindow builds a valid conversation: user prompts, assistant turns with 0–3 tool
// uses, and their results, some with extra user text merged into the results turn.
func randomWindow(r *rand.Rand) []protocol.Turn {
	turns := []protocol.Turn{protocol.UserText("task")}
	n := r.IntN(30)
	id := 0
	for i := 0; i < n; i++ {
		var blocks []protocol.Block
		if r.IntN(2) == 0 {
			blocks = append(blocks, protocol.Block{Type: protocol.BlockText, Text: strings.Repeat("t", r.IntN(2000))})
		}
		uses := r.IntN(4)
		var results []protocol.Block
		for u := 0; u < uses; u++ {
			id++
			tid := fmt.Sprintf("t%d", id)
			blocks = append(blocks, protocol.Block{Type: protocol.BlockToolUse, ID: tid, Name: "Read", Input: []byte(`{}`)})
			results = append(results, protocol.Block{Type: protocol.BlockToolResult, ToolUseID: tid, Content: strings.Repeat("r", r.IntN(50_000))})
		}
		if len(blocks) == 0 {
			blocks = append(blocks, protocol.Block{Type: protocol.BlockText, Text: "ok"})
		}
		turns = append(turns, protocol.Turn{Role: protocol.RoleAssistant, Blocks: blocks})
		switch {
		case len(results) > 0:
			turns = append(turns, protocol.Turn{Role: protocol.RoleUser, Blocks: results})
		default:
			turns = append(turns, protocol.UserText("next"))
		}
	}
	return turns
}

func TestKeptWindowNeverStartsInsideToolExchange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		turns := randomWindow(r)
		for _, trigger := range []string{agent.TriggerAuto, agent.TriggerForced} {
			in := decisionInput(turns, trigger, r.Int64N(250_000))
			in.CompactRequests = r.IntN(4)
			d := agent.Decide(in)
			if d.Keep == 0 {
				continue
			}
			require.Less(t, d.Keep, len(turns), "case %d", i)
			first := turns[len(turns)-d.Keep]
			hasResult := false
			for _, b := range first.Blocks {
				hasResult = hasResult || b.Type == protocol.BlockToolResult
			}
			assert.False(t, hasResult, "case %d: the kept window starts with tool results", i)
			assert.True(t, first.IsUserText() || first.Role == protocol.RoleAssistant, "case %d", i)
		}
	}
}

package scripted

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/anthropic"
)

// TestPromptCacheReadableOnceStarted accounts requests with one new prefix as the
// handler does, at their arrival: two that arrive before either answer has begun both
// write it; one that arrives after the first answer began reads it.
func TestPromptCacheReadableOnceStarted(t *testing.T) {
	m := New(Options{PromptCache: PromptCache{TTL: 5 * time.Minute}})
	system := strings.Repeat("Shared instructions for the batch. ", 150)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	arrive := func(task string) (*response, func()) {
		t.Helper()
		hreq, err := anthropic.New(anthropic.Config{}).NewRequest(context.Background(),
			protocol.Request{Model: "m", System: system, Messages: []protocol.Turn{protocol.UserText(task)}})
		require.NoError(t, err)
		body, err := io.ReadAll(hreq.Body)
		require.NoError(t, err)
		wr, err := parseRequest(formatAnthropic, body)
		require.NoError(t, err)
		resp := m.respond(wr.req, "", func() string { return task })
		return resp, m.cache.account(m, body, wr.req, resp, now)
	}
	prefix := int64(len(system) / 4)
	a, startA := arrive("task a")
	b, startB := arrive("task b")
	assert.Zero(t, a.usage.CacheRead)
	assert.Zero(t, b.usage.CacheRead, "a's entry is not readable before its answer began")
	assert.GreaterOrEqual(t, b.usage.CacheCreation, prefix, "so b writes the prefix too")
	startA()
	c, _ := arrive("task c")
	assert.Equal(t, prefix, c.usage.CacheRead, "readable once a's answer began")
	assert.Equal(t, int64(0), c.usage.Input, "all of c up to its breakpoint is cached or written")
	startB()
}

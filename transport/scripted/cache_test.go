package scripted_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/scripted"
)

// cached serves a model with a prompt cache over loopback HTTP and returns a function
// that sends one Messages request through the real Anthropic client and returns the
// input side of its answer's usage.
func cached(t *testing.T, opts scripted.Options) func(req protocol.Request) protocol.Usage {
	t.Helper()
	srv := httptest.NewServer(scripted.New(opts).Handler())
	t.Cleanup(srv.Close)
	c := transport.NewClient(anthropic.New(anthropic.Config{BaseURL: srv.URL + "/v1", APIKey: "k"}), transport.Options{})
	t.Cleanup(c.CloseIdleConnections)
	return func(req protocol.Request) protocol.Usage {
		t.Helper()
		var u *protocol.Usage
		for m := range c.Stream(context.Background(), req) {
			require.NotEqual(t, protocol.KindError, m.Kind, m.Err.Message)
			if m.Kind == protocol.KindUsage {
				u = &m.Usage
			}
		}
		require.NotNil(t, u)
		u.Output = 0 // the demo policy's answer; only the input is the cache's
		return *u
	}
}

// tokens is the scripted model's count: a token for every four bytes.
func tokens(parts ...string) int64 {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return int64(n / 4)
}

// TestPromptCacheAccounting plays sessions that share a system prompt, one after the
// other: the first writes its whole prompt, the next reads the system prompt and
// writes its own message, and a second turn reads the first turn's prefix back.
func TestPromptCacheAccounting(t *testing.T) {
	system := strings.Repeat("You are a careful agent. ", 240) // 6,000 bytes: 1,500 tokens
	send := cached(t, scripted.Options{PromptCache: scripted.PromptCache{TTL: 5 * time.Minute}})
	one := protocol.Request{Model: "m", System: system, Messages: []protocol.Turn{user("first task")}}
	two := protocol.Request{Model: "m", System: system, Messages: []protocol.Turn{user("second task")}}

	assert.Equal(t, protocol.Usage{CacheCreation: tokens(system, "first task")}, send(one),
		"nothing cached yet: the whole prompt is written")
	assert.Equal(t, protocol.Usage{CacheRead: tokens(system), CacheCreation: tokens(system, "second task") - tokens(system)}, send(two),
		"the system prompt is read, the session's own message written")

	later := one
	later.Messages = append(later.Messages, assistant("Working on it."), user("now the tests"))
	assert.Equal(t, protocol.Usage{CacheRead: tokens(system, "first task"),
		CacheCreation: tokens(system, "first task", "Working on it.", "now the tests") - tokens(system, "first task")}, send(later),
		"a later turn reads the earlier turn's prefix, found by the look-back from its breakpoint")
}

// TestPromptCacheTail plays two sessions of one job in workspaces of their own: the
// system prompt's tail after the breakpoint names the workspace, so it differs, and
// the second session still reads the shared prefix before it.
func TestPromptCacheTail(t *testing.T) {
	system := strings.Repeat("You are a careful agent. ", 240)
	send := cached(t, scripted.Options{PromptCache: scripted.PromptCache{TTL: 5 * time.Minute}})
	one := protocol.Request{Model: "m", System: system, SystemTail: "workspace: /out/a", Messages: []protocol.Turn{user("go")}}
	two := protocol.Request{Model: "m", System: system, SystemTail: "workspace: /out/bb", Messages: []protocol.Turn{user("go")}}

	assert.Equal(t, protocol.Usage{CacheCreation: tokens(system, "\n", one.SystemTail, "go")}, send(one))
	assert.Equal(t, protocol.Usage{CacheRead: tokens(system), CacheCreation: tokens(system, "\n", two.SystemTail, "go") - tokens(system)}, send(two),
		"the prefix up to the system breakpoint is read; the tail and the message are written")
}

func TestPromptCacheExpiresAndMinimum(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	system := strings.Repeat("x", 8000) // 2,000 tokens
	send := cached(t, scripted.Options{Now: clk.now, PromptCache: scripted.PromptCache{TTL: 5 * time.Minute}})
	req := protocol.Request{Model: "m", System: system, Messages: []protocol.Turn{user("go")}}
	send(req)
	clk.advance(4 * time.Minute)
	assert.Equal(t, tokens(system, "go"), send(req).CacheRead, "read within the TTL, which the read renews")
	clk.advance(4 * time.Minute)
	assert.Equal(t, tokens(system, "go"), send(req).CacheRead, "renewed by the read: still there 8 minutes after the write")
	clk.advance(5 * time.Minute)
	u := send(req)
	assert.Zero(t, u.CacheRead, "expired")
	assert.Equal(t, tokens(system, "go"), u.CacheCreation, "written again")

	short := protocol.Request{Model: "m", System: strings.Repeat("y", 400), Messages: []protocol.Turn{user("go")}}
	send(short)
	assert.Equal(t, protocol.Usage{Input: tokens(strings.Repeat("y", 400), "go")}, send(short),
		"a prefix under 1,024 tokens is not cached")

	other := req
	other.Model = "n"
	assert.Zero(t, send(other).CacheRead, "a cache is per model")
}

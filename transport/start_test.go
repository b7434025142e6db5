package transport

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/protocol"
)

// TestStreamNoticesStart checks that the client says when an answer begins: once per
// successful response, at its headers, and not for a failed attempt.
func TestStreamNoticesStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &fakeNet{replies: []reply{
			{status: 500, body: "api_error:boom"},
			{body: "text:a\nstop\n"},
		}}
		c := newFakeClient(net, Options{})
		var seen []string
		ctx := protocol.WithStartNotice(context.Background(), func() { seen = append(seen, "start") })
		for m := range c.Stream(ctx, protocol.Request{}) {
			seen = append(seen, m.Kind.EventType())
		}
		assert.Equal(t, []string{"retry", "start", "text", "stop"}, seen)
	})
}

package anthropic_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/transporttest"
)

// TestClientNamesWhatCame checks the error of a 200 answer that is not a stream of
// events: it names the content type and shows the first bytes, with the key the
// server echoed redacted, instead of only "stream ended without message_stop".
func TestClientNamesWhatCame(t *testing.T) {
	tests := []struct {
		name string
		give transporttest.Response
		want []string
	}{
		{name: "html",
			give: transporttest.Response{Header: map[string]string{"Content-Type": "text/html; charset=utf-8"},
				Body: []byte("<!doctype html><title>Login</title><p>key " + testKey + " expired</p>")},
			want: []string{"the server answered with Content-Type text/html; charset=utf-8, not an event stream",
				`the body starts "<!doctype html><title>Login</title><p>key [REDACTED] expired</p>"`}},
		{name: "garbage as an event stream",
			give: transporttest.Response{Body: []byte("\x00\x01garbage\xff and more")},
			want: []string{"HTTP 200, Content-Type text/event-stream", `the body starts "\x00\x01garbage\xff and more"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := transporttest.NewServer(t, tt.give)
			got := stream(t, newClient(t, srv, transport.Options{MaxAttempts: 1}))
			require.NotEmpty(t, got)
			last := got[len(got)-1]
			require.Equal(t, protocol.KindError, last.Kind, "%v", got)
			assert.Equal(t, protocol.ErrStream, last.Err.Kind)
			for _, w := range tt.want {
				assert.Contains(t, last.Err.Message, w)
			}
			assert.NotContains(t, last.Err.Message, testKey)
		})
	}
}

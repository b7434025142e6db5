package protocol_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/protocol"
)

// TestErrorDescribe checks that an error after its status reads without repeating a
// word: the kind appears only when the status does not already say it and the message
// does not start with it.
func TestErrorDescribe(t *testing.T) {
	tests := map[string]struct {
		status protocol.Status
		err    protocol.Error
		want   string
	}{
		"kind the status says": {status: protocol.StatusMaxTurns,
			err: protocol.Error{Kind: protocol.ErrMaxTurns, Message: "max turns (2) reached"}, want: "max turns (2) reached"},
		"checks": {status: protocol.StatusChecks,
			err: protocol.Error{Kind: protocol.ErrChecks, Message: "check tests failed: exit code 1"}, want: "check tests failed: exit code 1"},
		"cancelled": {status: protocol.StatusCancelled,
			err: protocol.Error{Kind: protocol.ErrCancelled, Message: "run interrupted"}, want: "run interrupted"},
		"kind that adds to the status": {status: protocol.StatusProvider,
			err:  protocol.Error{Kind: protocol.ErrNetwork, Message: "send request: connection refused"},
			want: "network: send request: connection refused"},
		"message that starts with the kind": {status: protocol.StatusCrashed,
			err: protocol.Error{Kind: protocol.ErrPanic, Message: "panic: provider exploded"}, want: "panic: provider exploded"},
		"message that starts with the status": {status: protocol.StatusChecks,
			err:  protocol.Error{Kind: protocol.ErrChecks, Message: "error_checks: error_checks: failed checks: tests"},
			want: "failed checks: tests"},
		"message that starts with status and kind": {status: protocol.StatusChecks,
			err: protocol.Error{Kind: protocol.ErrChecks, Message: "error_checks: checks: failed"}, want: "failed"},
		"no kind":    {status: protocol.StatusAuth, err: protocol.Error{Message: "HTTP 401: bad key"}, want: "HTTP 401: bad key"},
		"no message": {status: protocol.StatusProvider, err: protocol.Error{Kind: protocol.ErrServer}, want: "server"},
		"nothing":    {status: protocol.StatusChecks, err: protocol.Error{Kind: protocol.ErrChecks}, want: ""},
		"no status": {err: protocol.Error{Kind: protocol.ErrStream, Message: "stream ended"},
			want: "stream: stream ended"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Describe(tt.status))
		})
	}
}

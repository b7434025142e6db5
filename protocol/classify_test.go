package protocol_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/protocol"
)

func TestKindForStatus(t *testing.T) {
	tests := map[int]protocol.ErrorKind{
		400: protocol.ErrRequest, 401: protocol.ErrAuth, 402: protocol.ErrRequest, 403: protocol.ErrAuth,
		404: protocol.ErrRequest, 408: protocol.ErrTimeout, 409: protocol.ErrServer, 413: protocol.ErrRequest,
		422: protocol.ErrRequest, 429: protocol.ErrRateLimit, 500: protocol.ErrServer, 502: protocol.ErrServer,
		503: protocol.ErrServer, 504: protocol.ErrServer, 529: protocol.ErrOverloaded,
	}
	for status, want := range tests {
		assert.Equal(t, want, protocol.KindForStatus(status), "status %d", status)
	}
}

func TestKindForType(t *testing.T) {
	tests := map[string]protocol.ErrorKind{
		"overloaded_error": protocol.ErrOverloaded, "rate_limit_error": protocol.ErrRateLimit,
		"api_error": protocol.ErrServer, "timeout_error": protocol.ErrServer, "server_error": protocol.ErrServer,
		"authentication_error": protocol.ErrAuth, "permission_error": protocol.ErrAuth, "billing_error": protocol.ErrAuth,
		"invalid_request_error": protocol.ErrRequest, "not_found_error": protocol.ErrRequest,
		"request_too_large": protocol.ErrRequest, "model_not_found": protocol.ErrRequest,
		"something_new": "", "": "",
	}
	for typ, want := range tests {
		assert.Equal(t, want, protocol.KindForType(typ), "type %q", typ)
	}
}

func TestCancelError(t *testing.T) {
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancelExpired()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	withCause, cancelCause := context.WithCancelCause(context.Background())
	cancelCause(errors.New("run interrupted"))
	tests := map[string]struct {
		give context.Context
		want protocol.Error
	}{
		"deadline":  {give: expired, want: protocol.Error{Kind: protocol.ErrTimeout, Message: "context deadline exceeded"}},
		"cancelled": {give: cancelled, want: protocol.Error{Kind: protocol.ErrCancelled, Message: "context canceled"}},
		"cause":     {give: withCause, want: protocol.Error{Kind: protocol.ErrCancelled, Message: "run interrupted"}},
		"not ended": {give: context.Background(), want: protocol.Error{Kind: protocol.ErrCancelled, Message: "request cancelled"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.want, protocol.CancelError(tt.give))
		})
	}
}

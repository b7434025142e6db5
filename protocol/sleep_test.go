package protocol_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/protocol"
)

func TestSleep(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		d       time.Duration
		want    error
		atLeast time.Duration
	}{
		{name: "no wait", ctx: context.Background(), d: 0},
		{name: "negative", ctx: context.Background(), d: -time.Second},
		{name: "waits d", ctx: context.Background(), d: 20 * time.Millisecond, atLeast: 20 * time.Millisecond},
		{name: "ended context, no wait", ctx: cancelled, d: 0, want: context.Canceled},
		{name: "ended context cuts the wait", ctx: cancelled, d: time.Hour, want: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			assert.ErrorIs(t, protocol.Sleep(tt.ctx, tt.d), tt.want)
			assert.GreaterOrEqual(t, time.Since(start), tt.atLeast)
		})
	}
}

func TestSleepEndsWithTheContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- protocol.Sleep(ctx, time.Hour) }()
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled, "a cancel during the wait ends it")
}

package protocol

import (
	"context"
	"time"
)

type waitNoticeKey struct{}

// WithWaitNotice returns a context carrying fn, which a provider calls through
// NoticeWait before it waits on purpose (a shared rate-limit pause), so that a
// watchdog counts the wait as activity rather than silence.
func WithWaitNotice(ctx context.Context, fn func(d time.Duration)) context.Context {
	return context.WithValue(ctx, waitNoticeKey{}, fn)
}

// NoticeWait announces a deliberate wait of d to the function ctx carries, if any.
func NoticeWait(ctx context.Context, d time.Duration) {
	if fn, ok := ctx.Value(waitNoticeKey{}).(func(time.Duration)); ok && d > 0 {
		fn(d)
	}
}

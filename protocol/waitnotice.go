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

type startNoticeKey struct{}

// WithStartNotice returns a context carrying fn, which a provider calls through
// NoticeStart once the answer to a request has begun (the response's headers have
// arrived), before its first message: the moment a provider's prompt cache written by
// that request becomes readable to others.
func WithStartNotice(ctx context.Context, fn func()) context.Context {
	return context.WithValue(ctx, startNoticeKey{}, fn)
}

// NoticeStart tells the function ctx carries, if any, that an answer has begun.
func NoticeStart(ctx context.Context) {
	if fn, ok := ctx.Value(startNoticeKey{}).(func()); ok {
		fn()
	}
}

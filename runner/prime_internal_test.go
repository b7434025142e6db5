package runner

import (
	"context"
	"iter"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
)

// providerFunc is a one-method fake of agent.Provider that sees the request's context.
type providerFunc func(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message]

func (f providerFunc) Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
	return f(ctx, req)
}

// eventLog records what happens, in order.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

var primeReq = protocol.Request{Model: "m", System: "the shared system prompt", Messages: []protocol.Turn{protocol.UserText("go")}}

// answering is a provider that logs its calls and answers after latency, announcing
// the start of its answer when notice is set.
func answering(l *eventLog, name string, latency time.Duration, notice bool) providerFunc {
	return func(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
		return func(yield func(protocol.Message) bool) {
			l.add(name + " sends")
			time.Sleep(latency)
			if notice {
				protocol.NoticeStart(ctx)
				time.Sleep(latency / 2) // the first message comes a little after the headers
			}
			l.add(name + " answers")
			if yield(protocol.Message{Kind: protocol.KindText, Text: "hi"}) {
				yield(protocol.Message{Kind: protocol.KindStop, Stop: "end_turn"})
			}
		}
	}
}

func drain(p interface {
	Stream(context.Context, protocol.Request) iter.Seq[protocol.Message]
}, ctx context.Context, req protocol.Request) []protocol.Message {
	var out []protocol.Message
	for m := range p.Stream(ctx, req) {
		out = append(out, m)
	}
	return out
}

func anthropicInfo() ProviderInfo { return ProviderInfo{Name: "anthropic", Model: "m"} }

// TestPrimingOrder starts three sessions with one prefix at once: the first one's
// request goes alone, and the others send theirs only once its answer has begun, at
// the start notice when the provider gives one, else at its first message.
func TestPrimingOrder(t *testing.T) {
	for _, notice := range []bool{true, false} {
		name := "first message"
		if notice {
			name = "start notice"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newPrimer(time.Now)
				var l eventLog
				start := time.Now()
				var wg sync.WaitGroup
				var followersDone []time.Duration
				var mu sync.Mutex
				for i, who := range []string{"leader", "a", "b"} {
					prov := p.wrap(answering(&l, who, time.Second, notice), anthropicInfo(), jobs.Session{})
					wg.Go(func() {
						got := drain(prov, context.Background(), primeReq)
						assert.Len(t, got, 2, who)
						if i > 0 {
							mu.Lock()
							followersDone = append(followersDone, time.Since(start))
							mu.Unlock()
						}
					})
					synctest.Wait() // the leader is the first to ask
				}
				wg.Wait()
				events := l.get()
				require.Len(t, events, 6)
				assert.Equal(t, "leader sends", events[0])
				if notice {
					// released at the headers, one second in; the leader's first message
					// comes half a second later, while the others are under way
					assert.ElementsMatch(t, []string{"a sends", "b sends"}, events[1:3])
					assert.Equal(t, "leader answers", events[3])
				} else {
					assert.Equal(t, "leader answers", events[1])
					assert.ElementsMatch(t, []string{"a sends", "b sends"}, events[2:4])
				}
				// Released when the leader's answer began, one second in, they then take as
				// long as it did: a second, and half a second more to a first message after
				// the headers.
				wantEnd := 2 * time.Second
				if notice {
					wantEnd = 2*time.Second + 500*time.Millisecond
				}
				for _, d := range followersDone {
					assert.Equal(t, wantEnd, d)
				}
			})
		})
	}
}

// TestPrimingReleases checks what opens a group besides a started answer, and who
// never waits.
func TestPrimingReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPrimer(time.Now)
		var l eventLog
		failing := providerFunc(func(context.Context, protocol.Request) iter.Seq[protocol.Message] {
			return func(yield func(protocol.Message) bool) {
				time.Sleep(time.Second)
				l.add("leader fails")
				yield(protocol.Message{Kind: protocol.KindError, Err: protocol.Error{Kind: protocol.ErrAuth}})
			}
		})
		leader := p.wrap(failing, anthropicInfo(), jobs.Session{})
		follower := p.wrap(answering(&l, "follower", 0, false), anthropicInfo(), jobs.Session{})
		var wg sync.WaitGroup
		wg.Go(func() { drain(leader, context.Background(), primeReq) })
		synctest.Wait()
		wg.Go(func() { drain(follower, context.Background(), primeReq) })
		wg.Wait()
		assert.Equal(t, []string{"leader fails", "follower sends", "follower answers"}, l.get(), "a failed leader releases its group")

		// Later sessions with the prefix do not wait: the group is open.
		late := p.wrap(answering(&l, "late", 0, false), anthropicInfo(), jobs.Session{})
		start := time.Now()
		drain(late, context.Background(), primeReq)
		assert.Zero(t, time.Since(start))
		// A session's second call never waits.
		drain(follower, context.Background(), primeReq)
	})
}

func TestPrimingGroups(t *testing.T) {
	other := primeReq
	other.System = "another system prompt"
	tests := []struct {
		name     string
		info     ProviderInfo
		settings jobs.Resolved
		req      protocol.Request
		wantWait bool
	}{
		{name: "same prefix waits", info: anthropicInfo(), req: primeReq, wantWait: true},
		{name: "another system prompt", info: anthropicInfo(), req: other},
		{name: "another model", info: anthropicInfo(), req: protocol.Request{Model: "n", System: primeReq.System}},
		{name: "another endpoint", info: anthropicInfo(), settings: jobs.Resolved{BaseURL: "http://proxy"}, req: primeReq},
		{name: "another provider", info: ProviderInfo{Name: "openai", Model: "m"}, req: primeReq},
		{name: "no prefix", info: anthropicInfo(), req: protocol.Request{Model: "m"}},
		{name: "priming off", info: anthropicInfo(), settings: jobs.Resolved{Cache: jobs.Cache{NoPrime: true}}, req: primeReq},
		{name: "the scripted model has no cache", info: ProviderInfo{Name: "scripted", Model: "m"}, req: primeReq},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newPrimer(time.Now)
				var l eventLog
				leader := p.wrap(answering(&l, "leader", time.Second, false), anthropicInfo(), jobs.Session{})
				var wg sync.WaitGroup
				wg.Go(func() { drain(leader, context.Background(), primeReq) })
				synctest.Wait()
				start := time.Now()
				s := p.wrap(answering(&l, "other", 0, false), tt.info, jobs.Session{Settings: tt.settings})
				drain(s, context.Background(), tt.req)
				waited := time.Since(start)
				wg.Wait()
				if tt.wantWait {
					assert.Equal(t, time.Second, waited)
				} else {
					assert.Zero(t, waited)
				}
			})
		})
	}
}

// TestPrimingExpires checks that a group over primeTTL old is over: the next session
// with the prefix leads a new one, and a session joining it waits again.
func TestPrimingExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPrimer(time.Now)
		var l eventLog
		drain(p.wrap(answering(&l, "first", time.Second, false), anthropicInfo(), jobs.Session{}), context.Background(), primeReq)
		time.Sleep(primeTTL)
		var wg sync.WaitGroup
		wg.Go(func() {
			drain(p.wrap(answering(&l, "new leader", time.Second, false), anthropicInfo(), jobs.Session{}), context.Background(), primeReq)
		})
		synctest.Wait()
		start := time.Now()
		drain(p.wrap(answering(&l, "follower", 0, false), anthropicInfo(), jobs.Session{}), context.Background(), primeReq)
		assert.Equal(t, time.Second, time.Since(start))
		wg.Wait()
	})
}

// TestPrimingWaitIsAnnouncedAndCancellable checks that a waiting session tells its
// watchdog it waits, and gives up with a cancellation error when its context ends.
func TestPrimingWaitIsAnnouncedAndCancellable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPrimer(time.Now)
		var l eventLog
		leader := p.wrap(answering(&l, "leader", time.Hour, false), anthropicInfo(), jobs.Session{})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { drain(leader, ctx, primeReq) })
		synctest.Wait()
		var notices []time.Duration
		var mu sync.Mutex
		fctx, fcancel := context.WithTimeout(protocol.WithWaitNotice(context.Background(), func(d time.Duration) {
			mu.Lock()
			notices = append(notices, d)
			mu.Unlock()
		}), 12*time.Second)
		defer fcancel()
		got := drain(p.wrap(answering(&l, "follower", 0, false), anthropicInfo(), jobs.Session{}), fctx, primeReq)
		require.Len(t, got, 1)
		assert.Equal(t, protocol.KindError, got[0].Kind)
		assert.Equal(t, protocol.ErrTimeout, got[0].Err.Kind)
		assert.Equal(t, []time.Duration{2 * primeAnnounce, 2 * primeAnnounce, 2 * primeAnnounce}, notices, "announced at 0, 5 and 10 s")
		assert.Equal(t, []string{"leader sends"}, l.get(), "the follower never sent")
		cancel()
		wg.Wait()
	})
}

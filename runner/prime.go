package runner

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
)

// primer writes a provider's prompt cache once for the sessions of a run that start
// together with the same prefix: the same system prompt and tools, model and endpoint.
// A cache entry is readable only once the answer of the request that writes it has
// begun, so sessions that send the same prefix at once would each pay to write it.
// Instead the first session's first request goes alone; the others of its group wait
// until its answer has begun (the transport's start notice, or its first message),
// or its call has ended whatever the outcome, and then read what it wrote.
//
// A group whose leader began more than primeTTL ago is over: the provider may have
// dropped the entry, and the next session with that prefix leads a new group.
type primer struct {
	now func() time.Time

	mu     sync.Mutex
	groups map[string]*primeGroup
}

// primeTTL is how long a primed cache entry is taken to live: Anthropic's default
// (ephemeral) cache lifetime, about what OpenAI keeps an idle prefix.
const primeTTL = 5 * time.Minute

// primeAnnounce is how often a session waiting for its group's leader says it still
// waits, so that its watchdog counts the wait as activity.
const primeAnnounce = 5 * time.Second

// primeGroup is the sessions that share one prefix.
type primeGroup struct {
	open   chan struct{} // closed once the leader's answer began or its call ended
	opened time.Time     // when open was closed
	once   sync.Once
}

func newPrimer(now func() time.Time) *primer {
	return &primer{now: now, groups: map[string]*primeGroup{}}
}

// wrap returns the provider of session s, which info describes, behind the primer;
// the scripted model, which has no cache, and a session with cache: {prime: false}
// keep theirs.
func (p *primer) wrap(provider agent.Provider, info ProviderInfo, s jobs.Session) agent.Provider {
	if s.Settings.Cache.NoPrime || info.Name == "scripted" {
		return provider
	}
	return &primed{Provider: provider, p: p, endpoint: info.Name + "\x00" + s.Settings.BaseURL}
}

// join returns the group of key, making a new one, led by the caller, when there is
// none or the last one is over.
func (p *primer) join(key string) (g *primeGroup, leader bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	g, ok := p.groups[key]
	if ok && (g.opened.IsZero() || p.now().Sub(g.opened) < primeTTL) {
		return g, false
	}
	g = &primeGroup{open: make(chan struct{})}
	p.groups[key] = g
	return g, true
}

// release opens g: its leader's answer has begun, or its call is over.
func (p *primer) release(g *primeGroup) {
	g.once.Do(func() {
		p.mu.Lock()
		g.opened = p.now()
		p.mu.Unlock()
		close(g.open)
	})
}

// primed is one session's provider behind the primer: only its first call takes part.
type primed struct {
	agent.Provider
	p        *primer
	endpoint string
	called   atomic.Bool
}

// Stream sends req, first waiting for the leader of its group when it is the session's
// first call and another session leads.
func (pr *primed) Stream(ctx context.Context, req protocol.Request) iter.Seq[protocol.Message] {
	if pr.called.Swap(true) {
		return pr.Provider.Stream(ctx, req)
	}
	digest := req.PrefixDigest()
	if digest == "" {
		return pr.Provider.Stream(ctx, req)
	}
	return func(yield func(protocol.Message) bool) {
		g, leader := pr.p.join(pr.endpoint + "\x00" + req.Model + "\x00" + digest)
		if !leader {
			if err := waitOpen(ctx, g); err != nil {
				yield(protocol.Message{Kind: protocol.KindError, Err: protocol.CancelError(ctx)})
				return
			}
			for m := range pr.Provider.Stream(ctx, req) {
				if !yield(m) {
					return
				}
			}
			return
		}
		release := func() { pr.p.release(g) }
		defer release()
		for m := range pr.Provider.Stream(protocol.WithStartNotice(ctx, release), req) {
			release()
			if !yield(m) {
				return
			}
		}
	}
}

// waitOpen waits until g opens or ctx ends, announcing the wait as it goes.
func waitOpen(ctx context.Context, g *primeGroup) error {
	for {
		select {
		case <-g.open:
			return nil
		default:
		}
		protocol.NoticeWait(ctx, 2*primeAnnounce)
		t := time.NewTimer(primeAnnounce)
		select {
		case <-g.open:
			t.Stop()
			return nil
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/scripted"
)

// answer is one response of the fake server: when it was sent and its status.
type answer struct {
	at     time.Duration
	status int
}

// recorder records the status of every answer of a handler.
type recorder struct {
	h     http.Handler
	start time.Time
	mu    sync.Mutex
	seen  []answer
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	rc.h.ServeHTTP(sw, r)
	rc.mu.Lock()
	rc.seen = append(rc.seen, answer{at: time.Since(rc.start), status: sw.status})
	rc.mu.Unlock()
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// BenchmarkRateLimited queues 200 sessions, one model call each, on an endpoint that
// allows 60 requests a minute (the scripted model over loopback HTTP, with the
// Anthropic rate-limit headers and 429s past the limit), all sharing one Limiter as
// the sessions of one run do. It reports the 429s after the first 10 s as a share of
// all requests, the throughput from 10 s to the last answer as a share of the limit,
// and how long the limiter paced and paused the requests.
func BenchmarkRateLimited(b *testing.B) {
	const (
		sessions = 200
		rpm      = 60
		warmup   = 10 * time.Second
	)
	for b.Loop() {
		model := scripted.New(scripted.Options{RateLimit: scripted.RateLimit{RequestsPerMinute: rpm}})
		rec := &recorder{h: model.Handler(), start: time.Now()}
		srv := httptest.NewServer(rec)
		lim := transport.NewLimiter(nil)
		hc := transport.NewHTTPClient(transport.Options{})
		var wg sync.WaitGroup
		var failed sync.Map
		for i := range sessions {
			wg.Go(func() {
				c := transport.NewClient(anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "sk-bench"}),
					transport.Options{HTTP: hc, Limiter: lim, MaxAttempts: 50, MaxWait: time.Hour})
				req := protocol.Request{Model: "bench", MaxTokens: 100, Messages: []protocol.Turn{protocol.UserText("session " + strconv.Itoa(i))}}
				for m := range c.Stream(context.Background(), req) {
					if m.Kind == protocol.KindError {
						failed.Store(i, m.Err.Message)
					}
				}
			})
		}
		wg.Wait()
		hc.CloseIdleConnections()
		srv.Close()
		failed.Range(func(k, v any) bool {
			b.Fatalf("session %v failed: %v", k, v)
			return false
		})

		var total, late429, okAfter int
		var last time.Duration
		for _, a := range rec.seen {
			total++
			switch {
			case a.status == http.StatusTooManyRequests && a.at >= warmup:
				late429++
			case a.status == http.StatusOK:
				last = max(last, a.at)
				if a.at >= warmup {
					okAfter++
				}
			}
		}
		throttled, _ := lim.Throttled()
		b.ReportMetric(100*float64(late429)/float64(total), "%-429-after-10s")
		b.ReportMetric(100*float64(okAfter)/(last-warmup).Minutes()/rpm, "%-of-limit")
		b.ReportMetric(float64(total), "requests")
		b.ReportMetric(float64(model.RateLimited()), "429s")
		b.ReportMetric(lim.Paced().Seconds(), "paced-s")
		b.ReportMetric(throttled.Seconds(), "throttled-s")
		b.ReportMetric(last.Seconds(), "last-answer-s")
	}
}

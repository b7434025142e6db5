package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/scripted"
)

// A delta of the latency benchmark's answers is its sequence number: seven digits and
// a comma, eight runes, the scripted model's chunk size here.
const latencyDigits = 7

// seqAfter finds marker in b and reads the sequence number that follows it, -1 when
// there is none.
func seqAfter(b []byte, marker string) int {
	i := bytes.Index(b, []byte(marker))
	if i < 0 || len(b) < i+len(marker)+latencyDigits+1 || b[i+len(marker)+latencyDigits] != ',' {
		return -1
	}
	n, err := strconv.Atoi(string(b[i+len(marker) : i+len(marker)+latencyDigits]))
	if err != nil {
		return -1
	}
	return n
}

// arrivals records when each delta's bytes came out of the connection.
type arrivals struct {
	mu   sync.Mutex
	at   map[int]time.Time
	tail []byte // the end of the previous read, for a delta split across reads
}

// arrivalBody is a response body that records arrivals as it is read.
type arrivalBody struct {
	io.ReadCloser
	arr *arrivals
}

func (b *arrivalBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	now := time.Now()
	a := b.arr
	a.mu.Lock()
	buf := append(a.tail, p[:n]...)
	for rest := buf; ; {
		const marker = `"text_delta","text":"`
		i := bytes.Index(rest, []byte(marker))
		if i < 0 {
			break
		}
		if seq := seqAfter(rest[i:], marker); seq >= 0 {
			if _, seen := a.at[seq]; !seen {
				a.at[seq] = now
			}
		}
		rest = rest[i+len(marker):]
	}
	a.tail = append(a.tail[:0], buf[max(0, len(buf)-64):]...)
	a.mu.Unlock()
	return n, err
}

// arrivalTransport gives every response an arrivalBody.
type arrivalTransport struct {
	base http.RoundTripper
	arr  *arrivals
}

func (t *arrivalTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		resp.Body = &arrivalBody{ReadCloser: resp.Body, arr: t.arr}
	}
	return resp, err
}

// latencyFile is stream.jsonl: each line of a delta is timed once written, against
// the delta's arrival.
type latencyFile struct {
	f   *os.File
	arr *arrivals
	mu  *sync.Mutex
	out *[]time.Duration
}

func (w *latencyFile) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	now := time.Now()
	if seq := seqAfter(p, `"type":"text","content":"`); seq >= 0 {
		w.arr.mu.Lock()
		at, ok := w.arr.at[seq]
		w.arr.mu.Unlock()
		if ok {
			w.mu.Lock()
			*w.out = append(*w.out, now.Sub(at))
			w.mu.Unlock()
		}
	}
	return n, err
}

// BenchmarkStreamLatency streams 100 sessions at once, each an answer of 200 text
// deltas 5 ms apart from the scripted model over loopback HTTP, through the real
// transport, agent loop and sinks (stream.jsonl first, then events.jsonl and the
// transcript, behind a redactor with a secret, as a run's artifacts are), and reports
// the time from a delta's bytes coming out of the connection to its line being
// written to stream.jsonl: p50, p99 and the largest, at GOGC=400 as the agentrun
// binary runs.
func BenchmarkStreamLatency(b *testing.B) {
	const (
		sessions = 100
		deltas   = 200
		gap      = 5 * time.Millisecond
		secret   = "sk-bench-0123456789abcdef"
	)
	defer debug.SetGCPercent(debug.SetGCPercent(runnerGOGC))
	var text strings.Builder
	for i := range deltas {
		fmt.Fprintf(&text, "%0*d,", latencyDigits, i)
	}
	script, err := scripted.ParseScript("latency", []byte("steps:\n  - text: \""+text.String()+"\"\n"))
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(scripted.New(scripted.Options{Default: script, ChunkDelay: gap, ChunkRunes: latencyDigits + 1}).Handler())
	defer srv.Close()
	base := transport.NewHTTPClient(transport.Options{}).Transport
	defer base.(*http.Transport).CloseIdleConnections()
	var all []time.Duration
	for b.Loop() {
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		errs := make(chan error, sessions)
		root := b.TempDir()
		for i := range sessions {
			wg.Go(func() {
				errs <- latencySession(b.Context(), filepath.Join(root, strconv.Itoa(i)), srv.URL, secret, base, &mu, &lat)
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		if len(lat) != sessions*deltas {
			b.Fatalf("%d deltas timed, want %d", len(lat), sessions*deltas)
		}
		all = append(all, lat...)
	}
	slices.Sort(all)
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(float64(all[len(all)-1].Microseconds()), "max-µs")
	b.ReportMetric(float64(len(all)), "deltas")
}

// latencySession runs one session of BenchmarkStreamLatency in dir.
func latencySession(ctx context.Context, dir, url, secret string, base http.RoundTripper, mu *sync.Mutex, lat *[]time.Duration) (err error) {
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	arr := &arrivals{at: map[int]time.Time{}}
	client := transport.NewClient(anthropic.New(anthropic.Config{BaseURL: url + "/v1", APIKey: secret}),
		transport.Options{HTTP: &http.Client{Transport: &arrivalTransport{base: base, arr: arr}}})
	stream, err := os.Create(filepath.Join(dir, "stream.jsonl"))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stream.Close()) }()
	transcript, err := os.Create(filepath.Join(dir, "transcript.txt"))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, transcript.Close()) }()
	events, err := sink.OpenEvents(filepath.Join(dir, "events.jsonl"), time.Now)
	if err != nil {
		return err
	}
	files := sink.NewFiles([]string{secret})
	out := sink.NewLocked(files.Sink(sink.Multi(
		sink.NewStreamJSON(&latencyFile{f: stream, arr: arr, mu: mu, out: lat}, protocol.Envelope{}),
		events, sink.NewText(transcript, sink.TextOptions{}))))
	sess, err := agent.New(agent.Config{Workspace: ws, Tools: []string{}},
		agent.Deps{Provider: client, Sink: out, Store: &agent.DirStore{Dir: dir, Files: files}})
	if err != nil {
		return err
	}
	if err := sess.Start(); err != nil {
		return err
	}
	o := sess.Run(ctx, "count")
	if o.End != agent.EndCompleted {
		return fmt.Errorf("session ended %v: %+v", o.End, o.Err)
	}
	return out.Close()
}

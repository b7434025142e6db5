package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentrun/agentrun/transport/scripted"
)

const fakeSynopsis = `agentrun fake-server [--addr 127.0.0.1:8089] [--script NAME=FILE]... [--default-script FILE]
                       [--first-byte DURATION] [--chunk-delay DURATION] [--rpm N] [--tpm N] [--rate-window DURATION]
                       [--cache-ttl DURATION]`

const fakeExamples = `  agentrun fake-server --addr 127.0.0.1:8089 &
  ANTHROPIC_BASE_URL=http://127.0.0.1:8089/v1 ANTHROPIC_API_KEY=test agentrun run my-jobs.yaml
  OPENAI_BASE_URL=http://127.0.0.1:8089/v1 agentrun run my-jobs.yaml --provider openai
  agentrun fake-server --script flaky=flaky.yaml   # requests with model "flaky" play flaky.yaml
  agentrun fake-server --rpm 60 --tpm 100000       # a provider's rate limits, with its headers`

func (a *App) cmdFakeServer(ctx context.Context, args []string) error {
	fs := newFlags("fake-server")
	addr := fs.String("addr", "127.0.0.1:8089", "address to listen on (port 0 picks a free one)")
	var scripts stringList
	fs.Var(&scripts, "script", "NAME=FILE: play FILE for requests whose model is NAME; repeatable")
	def := fs.String("default-script", "", "script for requests whose model names no script (default: the demo policy)")
	firstByte := fs.Duration("first-byte", 0, "delay before the first byte of each response")
	chunkDelay := fs.Duration("chunk-delay", 0, "delay between streamed chunks")
	rpm := fs.Int("rpm", 0, "requests per minute allowed, with rate-limit headers and 429s past it (0: no limit)")
	tpm := fs.Int("tpm", 0, "input tokens per minute allowed, likewise (0: no limit)")
	window := fs.Duration("rate-window", 0, "how much of the --rpm and --tpm limits a full bucket holds, as time (default 1m)")
	cacheTTL := fs.Duration("cache-ttl", 0, "model Anthropic's prompt cache, entries living this long (0: no cache; the API's is 5m)")
	pos, err := a.parse(fs, fakeSynopsis, fakeExamples, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("fake-server: unexpected argument %q", pos[0])
	}
	opts := scripted.Options{Scripts: map[string]*scripted.Script{}, FirstByte: *firstByte, ChunkDelay: *chunkDelay,
		RateLimit:   scripted.RateLimit{RequestsPerMinute: *rpm, TokensPerMinute: *tpm, Window: *window},
		PromptCache: scripted.PromptCache{TTL: *cacheTTL}}
	for _, s := range scripts {
		name, file, ok := strings.Cut(s, "=")
		if !ok || name == "" || file == "" {
			return usagef("fake-server: --script %q: want NAME=FILE", s)
		}
		sc, err := scripted.LoadScript(file)
		if err != nil {
			return usageError{err}
		}
		opts.Scripts[name] = sc
	}
	if *def != "" {
		sc, err := scripted.LoadScript(*def)
		if err != nil {
			return usageError{err}
		}
		opts.Default = sc
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usageError{fmt.Errorf("fake-server: %w", err)}
	}
	srv := &http.Server{Handler: scripted.New(opts).Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(a.Stdout, "fake-server listening on http://%s (Anthropic /v1/messages, OpenAI /v1/chat/completions, /v1/responses)\n", ln.Addr())
	if f, ok := a.Stdout.(*os.File); ok {
		_ = f.Sync() // best effort: tests wait for the line above
	}
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-sigCtx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

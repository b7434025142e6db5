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

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/transport/scripted"
)

const fakeSynopsis = `agentrun fake-server [--addr 127.0.0.1:8089] [--spec JOBS.yaml]... [--script MODEL=FILE]...
                       [--default-script FILE] [--first-byte DURATION] [--chunk-delay DURATION]
                       [--rpm N] [--tpm N] [--rate-window DURATION] [--cache-ttl DURATION]`

const fakeExamples = `  agentrun fake-server --addr 127.0.0.1:8089 &
  ANTHROPIC_BASE_URL=http://127.0.0.1:8089/v1 ANTHROPIC_API_KEY=test agentrun run my-jobs.yaml
  OPENAI_BASE_URL=http://127.0.0.1:8089/v1 agentrun run my-jobs.yaml --provider openai
  agentrun fake-server --spec my-jobs.yaml        # every session plays the script its job names
  agentrun fake-server --script flaky=flaky.yaml  # requests with model "flaky" play flaky.yaml
  agentrun fake-server --rpm 60 --tpm 100000      # a provider's rate limits, with its headers`

func (a *App) cmdFakeServer(ctx context.Context, args []string) error {
	fs := newFlags("fake-server")
	addr := fs.String("addr", "127.0.0.1:8089", "address to listen on (port 0 picks a free one)")
	var specs, scripts stringList
	fs.Var(&specs, "spec", "JOBS.yaml: play every session of the spec the script its job names (script:), whatever its model; repeatable")
	fs.Var(&scripts, "script", "MODEL=FILE: play FILE for requests whose model is MODEL (and whose session has no script from --spec); repeatable")
	def := fs.String("default-script", "", "script for requests that neither --spec nor --script gives one (default: the demo policy)")
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
	if opts.Sessions, err = a.sessionScripts(specs); err != nil {
		return err
	}
	for _, s := range scripts {
		name, file, ok := strings.Cut(s, "=")
		if !ok || name == "" || file == "" {
			return usagef("fake-server: --script %q: want MODEL=FILE", s)
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
	_, _ = fmt.Fprintf(a.Stdout, "fake-server listening on http://%s (Anthropic /v1/messages, OpenAI /v1/chat/completions, /v1/responses)\n", ln.Addr())
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

// sessionScripts loads the job specs at paths and returns the script of each of their
// sessions by session key, the value agentrun sends in the X-Agentrun-Session header.
func (a *App) sessionScripts(paths []string) (map[string]*scripted.Script, error) {
	out := map[string]*scripted.Script{}
	from := map[string][2]string{} // the spec and the script file of each key
	for _, path := range paths {
		spec, err := jobs.Load(path, a.lookupEnv)
		if err != nil {
			return nil, usageError{fmt.Errorf("fake-server: %w", err)}
		}
		sessions, err := spec.Sessions()
		if err != nil {
			return nil, usageError{fmt.Errorf("fake-server: %w", err)}
		}
		scripts, err := loadScripts(sessions)
		if err != nil {
			return nil, usageError{fmt.Errorf("fake-server: %w", err)}
		}
		for _, s := range sessions {
			if s.Settings.Script == "" {
				continue
			}
			if prev, ok := from[s.Key]; ok && prev[1] != s.Settings.Script {
				return nil, usagef("fake-server: session %s is in both %s and %s with different scripts", s.Key, prev[0], path)
			}
			out[s.Key], from[s.Key] = scripts[s.Settings.Script], [2]string{path, s.Settings.Script}
		}
	}
	return out, nil
}

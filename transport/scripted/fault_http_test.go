package scripted_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/transport/scripted"
	"github.com/agentrun/agentrun/transport/sse"
)

func TestHandlerStatusFaults(t *testing.T) {
	tests := []struct {
		name       string
		fault      string
		wantStatus int
		wantHeader map[string]string
		wantBody   map[string]string // by wire name
	}{
		{
			name: "429", fault: `{status: 429, retry_after: 1s, header: {x-should-retry: "false"}}`, wantStatus: 429,
			wantHeader: map[string]string{"Retry-After": "1", "X-Should-Retry": "false", "Retry-After-Ms": ""},
			wantBody: map[string]string{
				"anthropic": `{"type":"error","error":{"type":"rate_limit_error","message":"Too Many Requests (scripted fault)"}}`,
				"chat":      `{"error":{"message":"Too Many Requests (scripted fault)","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
				"responses": `{"error":{"message":"Too Many Requests (scripted fault)","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			},
		},
		{
			name: "529", fault: `{status: 529, retry_after_ms: 250}`, wantStatus: 529,
			wantHeader: map[string]string{"Retry-After-Ms": "250", "Retry-After": ""},
			wantBody: map[string]string{
				"anthropic": `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded (scripted fault)"}}`,
				"chat":      `{"error":{"message":"Overloaded (scripted fault)","type":"overloaded_error","param":null,"code":"overloaded"}}`,
				"responses": `{"error":{"message":"Overloaded (scripted fault)","type":"overloaded_error","param":null,"code":"overloaded"}}`,
			},
		},
		{
			name: "custom body", fault: `{status: 400, retry_after: 0.5, body: '{"error":"nope"}'}`, wantStatus: 400,
			wantHeader: map[string]string{"Retry-After": "0.5"},
			wantBody:   map[string]string{"anthropic": `{"error":"nope"}`, "chat": `{"error":"nope"}`, "responses": `{"error":"nope"}`},
		},
		{
			name: "500", fault: `{status: 500}`, wantStatus: 500,
			wantBody: map[string]string{
				"anthropic": `{"type":"error","error":{"type":"api_error","message":"Internal Server Error (scripted fault)"}}`,
				"chat":      `{"error":{"message":"Internal Server Error (scripted fault)","type":"server_error","param":null,"code":"server_error"}}`,
				"responses": `{"error":{"message":"Internal Server Error (scripted fault)","type":"server_error","param":null,"code":"server_error"}}`,
			},
		},
	}
	for _, tt := range tests {
		for _, w := range wires {
			t.Run(tt.name+"/"+w.name, func(t *testing.T) {
				m := scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: hi\n    fault: "+tt.fault+"\n")})
				srv, client := server(t, m)
				resp := do(t, client, "POST", srv.URL+w.path, w.body, nil)
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				assert.Equal(t, tt.wantStatus, resp.StatusCode)
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				for k, v := range tt.wantHeader {
					assert.Equal(t, v, resp.Header.Get(k), k)
				}
				var got map[string]any
				require.NoError(t, json.Unmarshal(body, &got))
				delete(got, "request_id")
				gotJSON, err := json.Marshal(got)
				require.NoError(t, err)
				assert.JSONEq(t, tt.wantBody[w.name], string(gotJSON))

				resp = do(t, client, "POST", srv.URL+w.path, w.body, nil)
				evs, err := events(resp.Body)
				require.NoError(t, err)
				assert.Equal(t, http.StatusOK, resp.StatusCode, "the second attempt succeeds")
				require.NotEmpty(t, evs)
				assert.True(t, w.terminal(evs[len(evs)-1]))
			})
		}
	}
}

func TestHandlerStreamFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault string
		// check inspects the failing attempt: its events and the body's read error.
		check func(t *testing.T, w wire, evs []sse.Event, err error)
	}{
		{name: "cut", fault: "{cut: true}", check: func(t *testing.T, w wire, evs []sse.Event, err error) {
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			assertPartial(t, w, evs)
		}},
		{name: "eof", fault: "{eof: true}", check: func(t *testing.T, w wire, evs []sse.Event, err error) {
			assert.NoError(t, err)
			assertPartial(t, w, evs)
		}},
		{name: "malformed", fault: "{malformed: true}", check: func(t *testing.T, w wire, evs []sse.Event, err error) {
			assert.NoError(t, err)
			require.NotEmpty(t, evs)
			assertPartial(t, w, evs[:len(evs)-1])
			assert.False(t, json.Valid(evs[len(evs)-1].Data), "%s", evs[len(evs)-1].Data)
		}},
		{name: "error event", fault: "{error_event: overloaded_error}", check: func(t *testing.T, w wire, evs []sse.Event, err error) {
			assert.NoError(t, err)
			require.NotEmpty(t, evs)
			assertPartial(t, w, evs[:len(evs)-1])
			ev := evs[len(evs)-1]
			want := map[string]string{
				"anthropic": `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded (scripted fault)"}}`,
				"chat":      `{"error":{"message":"Overloaded (scripted fault)","type":"overloaded_error","param":null,"code":null}}`,
				"responses": `{"type":"error","sequence_number":8,"code":"overloaded_error","message":"Overloaded (scripted fault)"}`,
			}[w.name]
			assert.JSONEq(t, want, string(ev.Data))
			if w.name != "chat" {
				assert.Equal(t, "error", ev.Type)
			}
		}},
	}
	for _, tt := range tests {
		for _, w := range wires {
			t.Run(tt.name+"/"+w.name, func(t *testing.T) {
				m := scripted.New(scripted.Options{ChunkRunes: 1, Default: mustParse(t, "steps:\n  - text: abcdefgh\n    fault: "+tt.fault+"\n")})
				srv, client := server(t, m)
				resp := do(t, client, "POST", srv.URL+w.path, w.body, nil)
				require.Equal(t, http.StatusOK, resp.StatusCode)
				evs, err := events(resp.Body)
				tt.check(t, w, evs, err)

				resp = do(t, client, "POST", srv.URL+w.path, w.body, nil)
				evs, err = events(resp.Body)
				require.NoError(t, err)
				require.NotEmpty(t, evs)
				assert.True(t, w.terminal(evs[len(evs)-1]), "the second attempt is complete")
				assert.Equal(t, "abcdefgh", deltaText(t, w, evs))
			})
		}
	}
}

// assertPartial checks that evs is the first half of "abcdefgh" and no terminal event.
func assertPartial(t *testing.T, w wire, evs []sse.Event) {
	t.Helper()
	assert.Equal(t, "abcd", deltaText(t, w, evs))
	for _, ev := range evs {
		assert.False(t, w.terminal(ev), "terminal event in a partial stream")
	}
}

// deltaText joins the text deltas of a stream in format w.
func deltaText(t *testing.T, w wire, evs []sse.Event) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		var d struct {
			Type    string          `json:"type"`
			Delta   json.RawMessage `json:"delta"`
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal(ev.Data, &d) != nil {
			continue
		}
		switch {
		case w.name == "anthropic" && d.Type == "content_block_delta":
			var ad struct {
				Text string `json:"text"`
			}
			require.NoError(t, json.Unmarshal(d.Delta, &ad))
			b.WriteString(ad.Text)
		case w.name == "chat" && len(d.Choices) > 0:
			b.WriteString(d.Choices[0].Delta.Content)
		case w.name == "responses" && d.Type == "response.output_text.delta":
			var rd string
			require.NoError(t, json.Unmarshal(d.Delta, &rd))
			b.WriteString(rd)
		}
	}
	return b.String()
}

func TestHandlerStall(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			m := scripted.New(scripted.Options{ChunkRunes: 1, Default: mustParse(t, "steps:\n  - text: abcdefgh\n    fault: {stall: true}\n")})
			returned := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				defer close(returned)
				m.Handler().ServeHTTP(rw, r)
			}))
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+w.path, strings.NewReader(w.body))
			require.NoError(t, err)
			resp, err := client.Do(req)
			require.NoError(t, err)
			defer func() { _ = resp.Body.Close() }() // a read-only stream
			d := sse.NewDecoder(resp.Body)
			var evs []sse.Event
			for d.Next() {
				evs = append(evs, d.Event())
				if deltaText(t, w, evs) == "abcd" {
					cancel() // the stream is stalled now: leave
				}
			}
			assert.ErrorIs(t, d.Err(), context.Canceled)
			assertPartial(t, w, evs)
			<-returned // the handler returns once the client is gone
		})
	}
}

func TestHandlerPanicFault(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			m := scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: hi\n    fault: {panic: boom}\n")})
			srv, client := server(t, m)
			req, err := http.NewRequestWithContext(t.Context(), "POST", srv.URL+w.path, strings.NewReader(w.body))
			require.NoError(t, err)
			resp, err := client.Do(req)
			if err == nil {
				_ = resp.Body.Close()
			}
			assert.Error(t, err, "the connection is dropped")
			assert.Equal(t, http.StatusOK, do(t, client, "POST", srv.URL+w.path, w.body, nil).StatusCode)
		})
	}
}

func TestHandlerSessionHeader(t *testing.T) {
	m := scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: hi\n    fault: {status: 429}\n")})
	srv, client := server(t, m)
	w := wires[0]
	status := func(session string) int {
		h := http.Header{}
		if session != "" {
			h.Set(scripted.SessionHeader, session)
		}
		resp := do(t, client, "POST", srv.URL+w.path, w.body, h)
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	assert.Equal(t, 429, status("a"))
	assert.Equal(t, 429, status("b"), "another session has its own attempts")
	assert.Equal(t, 429, status(""), "without the header the body identifies the session")
	assert.Equal(t, 200, status("a"))
	assert.Equal(t, 200, status("b"))
	assert.Equal(t, 200, status(""))
}

func TestHandlerClientLeavesDuringDelays(t *testing.T) {
	tests := map[string]scripted.Options{
		"first byte":  {FirstByte: time.Hour},
		"chunk delay": {ChunkDelay: time.Hour, ChunkRunes: 1},
	}
	for name, opts := range tests {
		t.Run(name, func(t *testing.T) {
			opts.Default = mustParse(t, "steps:\n  - text: abc\n")
			m := scripted.New(opts)
			returned := make(chan struct{})
			entered := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				defer close(returned)
				close(entered)
				m.Handler().ServeHTTP(rw, r)
			}))
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			ctx, cancel := context.WithCancel(t.Context())
			req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+wires[0].path, strings.NewReader(wires[0].body))
			require.NoError(t, err)
			done := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				defer close(done)
				resp, err := client.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close() // read to the end: nothing is lost
				}
			})
			<-entered
			cancel()
			<-returned
			wg.Wait()
		})
	}
}

func TestHandlerConcurrent(t *testing.T) {
	s, err := scripted.LoadScript("testdata/scripts/faults.yaml")
	require.NoError(t, err)
	m := scripted.New(scripted.Options{Default: s, ChunkRunes: 4})
	srv, client := server(t, m)
	const sessions = 8
	var wg sync.WaitGroup
	for i := range sessions {
		for _, w := range wires {
			wg.Go(func() {
				h := http.Header{}
				h.Set(scripted.SessionHeader, w.name+"-"+itoa(i))
				for attempt := 1; ; attempt++ {
					req, err := http.NewRequestWithContext(t.Context(), "POST", srv.URL+w.path, strings.NewReader(w.body))
					if !assert.NoError(t, err) {
						return
					}
					maps(req.Header, h)
					resp, err := client.Do(req)
					if !assert.NoError(t, err) {
						return
					}
					evs, _ := events(resp.Body)
					_ = resp.Body.Close() // read to the end: nothing is lost
					if resp.StatusCode == http.StatusOK && len(evs) > 0 && w.terminal(evs[len(evs)-1]) {
						assert.Equal(t, 2, attempt, "%s session %d", w.name, i)
						assert.Equal(t, "First answer after a rate limit.", deltaText(t, w, evs))
						return
					}
					if attempt > 2 {
						t.Errorf("%s session %d: no success after %d attempts", w.name, i, attempt)
						return
					}
				}
			})
		}
	}
	wg.Wait()
}

// timedWriter records when each write of a response happens.
type timedWriter struct {
	header http.Header
	start  time.Time
	status int
	at     []time.Duration
	body   bytes.Buffer
}

func (w *timedWriter) Header() http.Header { return w.header }

func (w *timedWriter) WriteHeader(status int) {
	w.status = status
	w.at = append(w.at, -time.Since(w.start)) // negative: the header
}

func (w *timedWriter) Write(p []byte) (int, error) {
	w.at = append(w.at, time.Since(w.start))
	return w.body.Write(p)
}

func (w *timedWriter) Flush() {}

func TestHandlerLatency(t *testing.T) {
	ms := time.Millisecond
	tests := map[string]struct {
		script string
		want   []time.Duration
	}{
		// header, role chunk, "ab", "cd", finish_reason, usage, [DONE]
		"text": {script: "steps:\n  - text: abcd\n", want: []time.Duration{-1000 * ms, 1000 * ms, 1000 * ms, 1100 * ms, 1100 * ms, 1100 * ms, 1100 * ms}},
		// header, role chunk, call start, two argument pieces, finish_reason, usage, [DONE]
		"tool call": {script: "steps:\n  - tool_calls: [{name: T, input: {x: 123456789012345678901234567890}}]\n",
			want: []time.Duration{-1000 * ms, 1000 * ms, 1000 * ms, 1000 * ms, 1100 * ms, 1100 * ms, 1100 * ms, 1100 * ms}},
		// the status is sent after the first-byte delay too
		"status fault": {script: "steps:\n  - {text: x, fault: {status: 503}}\n", want: []time.Duration{-1000 * ms, 1000 * ms}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := scripted.New(scripted.Options{FirstByte: time.Second, ChunkDelay: 100 * time.Millisecond, ChunkRunes: 2,
					Default: mustParse(t, tt.script)})
				w := &timedWriter{header: http.Header{}, start: time.Now()}
				m.Handler().ServeHTTP(w, httptest.NewRequest("POST", wires[1].path, strings.NewReader(wires[1].body)))
				assert.Equal(t, tt.want, w.at, "%s", w.body.String())
			})
		})
	}
}

package scripted_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/transport/scripted"
	"github.com/agentrun/agentrun/transport/sse"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// wire describes one format the handler serves, for raw HTTP tests.
type wire struct {
	name     string
	path     string
	body     string // a minimal streaming request saying "go"
	terminal func(ev sse.Event) bool
}

var wires = []wire{
	{
		name: "anthropic", path: "/v1/messages",
		body:     `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"go"}]}`,
		terminal: func(ev sse.Event) bool { return ev.Type == "message_stop" },
	},
	{
		name: "chat", path: "/v1/chat/completions",
		body:     `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}]}`,
		terminal: func(ev sse.Event) bool { return string(ev.Data) == "[DONE]" },
	},
	{
		name: "responses", path: "/v1/responses",
		body:     `{"model":"m","stream":true,"input":"go"}`,
		terminal: func(ev sse.Event) bool { return ev.Type == "response.completed" },
	},
}

// server serves m on loopback until the test ends; its client is closed then too.
func server(t *testing.T, m *scripted.Model) (*httptest.Server, *http.Client) {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		srv.Close()
	})
	return srv, client
}

// reply is a response read whole: its status, headers and body.
type reply struct {
	StatusCode int
	Header     http.Header
	Body       io.Reader
}

// do makes one request and reads its response to the end.
func do(t *testing.T, client *http.Client, method, url, body string, header http.Header) *reply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	require.NoError(t, err)
	maps(req.Header, header)
	resp, err := client.Do(req)
	require.NoError(t, err)
	b, readErr := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	// A cut stream's read error comes after its bytes, as the live body gave it.
	var got io.Reader = bytes.NewReader(b)
	if readErr != nil {
		got = io.MultiReader(got, failingReader{readErr})
	}
	return &reply{StatusCode: resp.StatusCode, Header: resp.Header, Body: got}
}

// failingReader returns its error on every read.
type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func maps(dst, src http.Header) {
	for k, v := range src {
		dst[k] = v
	}
}

// events reads the SSE events of r until its end, returning the read error too.
func events(r io.Reader) ([]sse.Event, error) {
	d := sse.NewDecoder(r)
	var evs []sse.Event
	for d.Next() {
		if ev := d.Event(); !ev.Comment {
			evs = append(evs, ev)
		}
	}
	return evs, d.Err()
}

func TestHandlerRoutes(t *testing.T) {
	m := scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: hi\n")})
	srv, client := server(t, m)
	const notAllowed = `{"type":"error","error":{"type":"invalid_request_error","message":"method GET not allowed on /v1/messages"}}`
	tests := []struct {
		name       string
		method     string
		path, body string
		wantStatus int
		wantAllow  string
		wantBody   string
	}{
		{name: "health", method: "GET", path: "/healthz", wantStatus: 200, wantBody: `{"status":"ok"}`},
		{name: "health under v1", method: "GET", path: "/v1/healthz", wantStatus: 200, wantBody: `{"status":"ok"}`},
		{name: "health post", method: "POST", path: "/healthz", wantStatus: 405, wantAllow: "GET, HEAD",
			wantBody: `{"type":"error","error":{"type":"invalid_request_error","message":"method POST not allowed on /healthz"}}`},
		{name: "get messages", method: "GET", path: "/v1/messages", wantStatus: 405, wantAllow: "POST", wantBody: notAllowed},
		{name: "put chat", method: "PUT", path: "/chat/completions", wantStatus: 405, wantAllow: "POST",
			wantBody: `{"error":{"message":"method PUT not allowed on /chat/completions","type":"invalid_request_error","param":null,"code":null}}`},
		{name: "unknown path", method: "POST", path: "/v1/completions", wantStatus: 404,
			wantBody: `{"type":"error","error":{"type":"not_found_error","message":"no route for /v1/completions"}}`},
		{name: "v1 prefix only", method: "POST", path: "/v1x/messages", wantStatus: 404,
			wantBody: `{"type":"error","error":{"type":"not_found_error","message":"no route for /v1x/messages"}}`},
		{name: "broken json", method: "POST", path: "/v1/messages", body: `{"model":`, wantStatus: 400,
			wantBody: `{"type":"error","error":{"type":"invalid_request_error","message":"decode request: unexpected end of JSON input"}}`},
		{name: "broken json chat", method: "POST", path: "/chat/completions", body: `[1]`, wantStatus: 400,
			wantBody: `{"error":{"message":"decode request: json: cannot unmarshal array into Go value of type scripted.chatRequestIn","type":"invalid_request_error","param":null,"code":null}}`},
		{name: "unknown role", method: "POST", path: "/v1/responses", body: `{"stream":true,"input":[{"role":"robot","content":"x"}]}`, wantStatus: 400,
			wantBody: `{"error":{"message":"decode request: input[0]: unknown role \"robot\"","type":"invalid_request_error","param":null,"code":null}}`},
		{name: "not streaming", method: "POST", path: "/v1/messages", body: `{"model":"m","messages":[]}`, wantStatus: 400,
			wantBody: `{"type":"error","error":{"type":"invalid_request_error","message":"the scripted model only streams: set \"stream\": true"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := do(t, client, tt.method, srv.URL+tt.path, tt.body, nil)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.wantStatus, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			assert.Equal(t, tt.wantAllow, resp.Header.Get("Allow"))
			assert.JSONEq(t, tt.wantBody, string(body))
		})
	}
}

func TestHandlerTooLarge(t *testing.T) {
	t.Parallel()
	m := scripted.New(scripted.Options{})
	tests := map[string]int64{"declared": 64<<20 + 1, "chunked": -1}
	for name, length := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := io.MultiReader(strings.NewReader(`{"model":"`), io.LimitReader(zeros{}, 64<<20))
			req := httptest.NewRequestWithContext(t.Context(), "POST", "/v1/chat/completions", body)
			req.ContentLength = length
			rec := httptest.NewRecorder()
			m.Handler().ServeHTTP(rec, req)
			assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
			assert.JSONEq(t, `{"error":{"message":"request body over 67108864 bytes","type":"invalid_request_error","param":null,"code":null}}`,
				rec.Body.String())
		})
	}
}

// zeros reads as endless '0' bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// goldenScript is served by TestHandlerGolden: every kind of output in step 0, and a
// step 1 whose usage is estimated from the parsed conversation.
const goldenScript = `steps:
  - thinking: "Plan: <write> the file."
    text: "Writing café.md — now."
    tool_calls:
      - name: Write
        input: {path: "café.md", content: "# Menu\nCrème brûlée — 6 €"}
      - name: Bash
        input: {command: "cat café.md"}
    usage: {input: 120, output: 40, cache_read: 30}
  - text: "Done."
`

func TestHandlerGolden(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	m := scripted.New(scripted.Options{Default: mustParse(t, goldenScript), Now: now})
	srv, client := server(t, m)
	for _, w := range wires {
		for _, c := range []string{"first", "second"} {
			t.Run(w.name+"/"+c, func(t *testing.T) {
				dir := filepath.Join("testdata", "TestHandlerGolden")
				body, err := os.ReadFile(filepath.Join(dir, w.name+"_"+c+".request.json"))
				require.NoError(t, err)
				resp := do(t, client, "POST", srv.URL+w.path, string(body), nil)
				require.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
				got, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				golden := filepath.Join(dir, w.name+"_"+c+".sse")
				if *update {
					require.NoError(t, os.WriteFile(golden, got, 0o644))
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err)
				assertSameEvents(t, want, got)
			})
		}
	}
}

// assertSameEvents compares two SSE streams by meaning: event names, and data as JSON.
func assertSameEvents(t *testing.T, want, got []byte) {
	t.Helper()
	wantEvs, err := events(bytes.NewReader(want))
	require.NoError(t, err)
	gotEvs, err := events(bytes.NewReader(got))
	require.NoError(t, err)
	require.Len(t, gotEvs, len(wantEvs), "got:\n%s", got)
	for i := range wantEvs {
		assert.Equal(t, wantEvs[i].Type, gotEvs[i].Type, "event %d", i)
		if json.Valid(wantEvs[i].Data) {
			assert.JSONEq(t, string(wantEvs[i].Data), string(gotEvs[i].Data), "event %d", i)
		} else {
			assert.Equal(t, string(wantEvs[i].Data), string(gotEvs[i].Data), "event %d", i)
		}
	}
}

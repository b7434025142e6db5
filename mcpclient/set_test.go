package mcpclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/mcpclient"
	"github.com/agentrun/agentrun/mcpclient/mcptest"
	"github.com/agentrun/agentrun/protocol"
)

func call(t *testing.T, s *mcpclient.Set, tool, input string) (string, bool) {
	t.Helper()
	r := s.Call(t.Context(), tool, json.RawMessage(input))
	return r.Content, r.IsError
}

func TestStdioServer(t *testing.T) {
	if testing.Short() {
		t.Skip("carries a 10 MB result through a stdio server (not with -short)")
	}
	t.Parallel()
	h := newHarness(t)
	cfg := h.stdio("test", "ok")
	cfg.Offers = func(name string) bool { return name != "garble" }
	cfg.CallTimeout = 2 * time.Minute // 10 MB through the race detector
	s := h.connect(cfg)

	st := s.Statuses()
	require.Len(t, st, 1)
	assert.Equal(t, protocol.MCPServer{Name: "test", Transport: "stdio", Status: protocol.MCPConnected, ToolCount: 9}, st[0])
	var names []string
	for _, sp := range s.Specs() {
		names = append(names, sp.Name)
	}
	assert.ElementsMatch(t, []string{"mcp__test__echo", "mcp__test__add", "mcp__test__fail", "mcp__test__big", "mcp__test__hang",
		"mcp__test__crash", "mcp__test__ask", "mcp__test__sample", "mcp__test__env"}, names)
	assert.NotContains(t, names, "mcp__test__garble", "a filtered tool is not offered")
	for _, sp := range s.Specs() {
		if sp.Name == "mcp__test__echo" {
			assert.Equal(t, "Echoes the text.", sp.Description)
			assert.JSONEq(t, `{"type":"object","required":["text"],"properties":{"text":{"type":"string","description":"the text to echo"}},"additionalProperties":false}`,
				string(sp.InputSchema), "the server's own input schema")
		}
	}
	assert.Equal(t, "test", s.Server("mcp__test__echo"))
	assert.Empty(t, s.Server("Bash"))

	out, isErr := call(t, s, "mcp__test__echo", `{"text":"hi"}`)
	assert.False(t, isErr)
	assert.Equal(t, "echo: hi", out)
	out, isErr = call(t, s, "mcp__test__add", `{"a":2,"b":3}`)
	assert.False(t, isErr)
	assert.JSONEq(t, `{"sum":5}`, out, "structured content, once (the SDK also writes it as text)")
	out, isErr = call(t, s, "mcp__test__fail", `{}`)
	assert.True(t, isErr, "the server's isError")
	assert.Equal(t, "the disk is full", out)
	out, isErr = call(t, s, "mcp__test__echo", `{"text":1}`)
	assert.True(t, isErr, "invalid input")
	assert.Contains(t, out, "text")
	out, isErr = call(t, s, "mcp__test__env", `{}`)
	require.False(t, isErr, out)
	assert.Contains(t, out, "cwd="+h.ws+"\n", "the workspace is its working directory")
	assert.Contains(t, out, "HOME=")
	out, isErr = call(t, s, "mcp__test__big", `{"bytes":10485760}`)
	require.False(t, isErr)
	assert.Len(t, out, 10<<20, "a 10 MB result comes back whole; the agent caps it")
	assert.Equal(t, []string{"test connected"}, h.events.statuses())
}

// TestStartupFaults checks each way a server can fail to connect: the status, the
// reason, and that nothing is left running.
func TestStartupFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out startup timeouts (not with -short)")
	}
	t.Parallel()
	tests := map[string]struct {
		mode, status string
		reason       []string
	}{
		"exits at start": {mode: "exit", status: protocol.MCPFailed, reason: []string{"the server exited while initializing", "exit status 1", "fatal: no configuration found"}},
		"hangs in initialize": {mode: "hang-init", status: protocol.MCPTimeout,
			reason: []string{"no answer within 4s (startup_timeout) while initializing"}},
		"slow tools/list": {mode: "slow-list", status: protocol.MCPTimeout,
			reason: []string{"no answer within 4s (startup_timeout) while listing its tools"}},
		"writes invalid JSON": {mode: "invalid-json", status: protocol.MCPFailed, reason: []string{"not JSON-RPC while initializing"}},
		"no such command":     {mode: "", status: protocol.MCPFailed, reason: []string{"starting: start ./missing-server: no such file or directory"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			cfg := h.stdio("srv", tt.mode)
			if tt.status == protocol.MCPTimeout {
				// Long enough that a loaded machine starts the server and initializes
				// it in time (the phase is part of the reason); the hangs are endless.
				cfg.StartupTimeout = 4 * time.Second
			}
			cfg.Required = true
			if tt.mode == "" {
				cfg.Command = "./missing-server"
			}
			start := time.Now()
			s := h.connect(cfg)
			assert.Less(t, time.Since(start), cfg.StartupTimeout+3*time.Second, "bounded by the startup timeout")
			st := s.Statuses()[0]
			assert.Equal(t, tt.status, st.Status)
			for _, r := range tt.reason {
				assert.Contains(t, st.Reason, r)
			}
			assert.Empty(t, s.Specs())
			down, ok := s.RequiredDown()
			assert.True(t, ok)
			assert.Equal(t, "srv", down.Name)
			assert.Equal(t, []string{"srv " + tt.status}, h.events.statuses())
			require.Len(t, h.events.errors(protocol.ErrMCP), 1)
			assert.Contains(t, h.events.errors(protocol.ErrMCP)[0], "required MCP server srv is "+tt.status)
			out, isErr := call(t, s, "mcp__srv__echo", `{}`)
			assert.True(t, isErr)
			assert.Contains(t, out, "unknown MCP tool")
			require.NoError(t, s.Close())
			assert.Empty(t, marked(t, h.mark), "the server is gone")
		})
	}
}

func TestOptionalServerFailureIsAWarning(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bad := h.stdio("bad", "exit")
	s := h.connect(h.stdio("good", "ok"), bad)
	_, down := s.RequiredDown()
	assert.False(t, down)
	assert.Equal(t, []string{"good connected", "bad failed"}, h.events.statuses())
	warn := h.events.errors(protocol.ErrMCP)
	require.Len(t, warn, 1)
	assert.Contains(t, warn[0], "optional MCP server bad is failed")
	assert.Contains(t, warn[0], "its tools are absent")
	assert.Equal(t, "good", s.Server("mcp__good__echo"))
	assert.Empty(t, s.Server("mcp__bad__echo"))
}

func TestCallFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out call faults (not with -short)")
	}
	t.Parallel()
	h := newHarness(t)
	cfg := h.stdio("test", "ok")
	cfg.CallTimeout = time.Second
	s := h.connect(cfg)

	// A call that hangs times out; the server goes on serving.
	start := time.Now()
	out, isErr := call(t, s, "mcp__test__hang", `{}`)
	assert.True(t, isErr)
	assert.Contains(t, out, "timed out after 1s (call_timeout)")
	assert.Less(t, time.Since(start), 3*time.Second)
	out, _ = call(t, s, "mcp__test__echo", `{"text":"still here"}`)
	assert.Equal(t, "echo: still here", out)

	// A crash mid-call is a tool error; the server is restarted once.
	out, isErr = call(t, s, "mcp__test__crash", `{}`)
	assert.True(t, isErr)
	assert.Contains(t, out, "crashed during the call of crash (the server exited: exit status 2: panic: the test server crashes")
	assert.Contains(t, out, "it has been restarted")
	out, isErr = call(t, s, "mcp__test__echo", `{"text":"again"}`)
	assert.False(t, isErr, out)
	assert.Equal(t, "echo: again", out)
	st := s.Statuses()[0]
	assert.Equal(t, protocol.MCPRestarted, st.Status)
	assert.Equal(t, 1, st.Restarts)

	// It writes what is not JSON: the connection is lost, and no second restart is made.
	out, isErr = call(t, s, "mcp__test__garble", `{}`)
	assert.True(t, isErr)
	assert.Contains(t, out, "crashed during the call of garble")
	assert.Contains(t, out, "it is down for the rest of the session")
	out, isErr = call(t, s, "mcp__test__echo", `{"text":"x"}`)
	assert.True(t, isErr)
	assert.Contains(t, out, "MCP server test is down (crashed:")
	assert.Contains(t, out, "restarted once per session")
	assert.Equal(t, []string{"test connected", "test crashed", "test restarted", "test crashed"}, h.events.statuses())
	assert.Equal(t, protocol.MCPCrashed, s.Statuses()[0].Status)
}

// TestACrashWhileIdle checks that a server that exits between calls is reported at
// once, and restarted for the next call, which runs.
func TestACrashWhileIdle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := h.connect(h.stdio("test", "ok"))
	pids := marked(t, h.mark)
	require.Len(t, pids, 1)
	require.NoError(t, syscall.Kill(pids[0], syscall.SIGKILL))
	require.Eventually(t, func() bool { return s.Statuses()[0].Status == protocol.MCPCrashed }, 10*time.Second, 10*time.Millisecond)
	out, isErr := call(t, s, "mcp__test__echo", `{"text":"after"}`)
	assert.False(t, isErr, out)
	assert.Equal(t, "echo: after", out)
	assert.Equal(t, []string{"test connected", "test crashed", "test restarted"}, h.events.statuses())
}

func TestElicitationAndSamplingAreDeclined(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := h.connect(h.stdio("test", "ok"))
	out, isErr := call(t, s, "mcp__test__ask", `{}`)
	assert.False(t, isErr, out)
	assert.Equal(t, "the user chose: decline", out)
	out, _ = call(t, s, "mcp__test__sample", `{}`)
	assert.Contains(t, out, "sampling declined")
	declined := h.events.errors(protocol.ErrMCPDeclined)
	require.Len(t, declined, 2)
	assert.Contains(t, declined[0], `MCP server test asked for user input (elicitation "Which branch?"); declined: agentrun runs headless`)
	assert.Contains(t, declined[1], "MCP server test asked for a model completion (sampling); declined")
}

// httpServer serves the test server over streamable HTTP on loopback.
func httpServer(t *testing.T, token string) string {
	t.Helper()
	srv := mcptest.HTTP(token)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func TestHTTPServer(t *testing.T) {
	t.Parallel()
	url := httpServer(t, "t0ken")
	tests := map[string]struct {
		headers map[string]string
		status  string
		reason  string
	}{
		"static bearer token": {headers: map[string]string{"Authorization": "Bearer t0ken"}, status: protocol.MCPConnected},
		"no token":            {status: protocol.MCPNeedsAuth, reason: "the server answered HTTP 401 while initializing: it asks for authorization, and agentrun has no interactive OAuth"},
		"wrong token":         {headers: map[string]string{"Authorization": "Bearer nope"}, status: protocol.MCPNeedsAuth, reason: "HTTP 401"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			h := &harness{t: t}
			s := h.connect(mcpclient.Config{Name: "web", URL: url, Headers: tt.headers, StartupTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
			st := s.Statuses()[0]
			assert.Equal(t, tt.status, st.Status, st.Reason)
			assert.Contains(t, st.Reason, tt.reason)
			if tt.status != protocol.MCPConnected {
				assert.NotContains(t, st.Reason, "nope", "no header value in a reason")
				return
			}
			assert.Equal(t, "http", st.Transport)
			out, isErr := call(t, s, "mcp__web__echo", `{"text":"over http"}`)
			assert.False(t, isErr, out)
			assert.Equal(t, "echo: over http", out)
			out, isErr = call(t, s, "mcp__web__fail", `{}`)
			assert.True(t, isErr)
			assert.Equal(t, "the disk is full", out)
		})
	}
}

func TestHTTPServerUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	h := &harness{t: t}
	s := h.connect(mcpclient.Config{Name: "gone", URL: url + "/mcp", StartupTimeout: 5 * time.Second, CallTimeout: time.Second})
	st := s.Statuses()[0]
	assert.Equal(t, protocol.MCPFailed, st.Status)
	assert.Contains(t, st.Reason, "connection refused")
}

// TestToolNames checks the names tools are offered as.
func TestToolNames(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := h.connect(h.stdio("my-server", "ok"))
	for _, sp := range s.Specs() {
		assert.True(t, strings.HasPrefix(sp.Name, "mcp__my-server__"), sp.Name)
		assert.LessOrEqual(t, len(sp.Name), 64)
	}
}

func TestSessionCancelEndsACall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := h.connect(h.stdio("test", "ok"))
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	r := s.Call(ctx, "mcp__test__hang", json.RawMessage(`{}`))
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content, "did not finish: context canceled")
}

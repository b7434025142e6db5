// Package mcptest serves the MCP server of agentrun's tests, built with the official
// SDK's server package: in process, over streamable HTTP, or over stdio as
// mcp-test-server, with Env naming its mode.
package mcptest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentrun/agentrun/testbuild"
)

// Env names the mode of the stdio server (ServeStdio), which mcp-test-server runs.
const Env = "AGENTRUN_TEST_MCP_SERVER"

// server is mcp-test-server, built by the first Link of a test binary.
var server = testbuild.New("mcp-test-server", testbuild.Cmd{File: "mcp-test-server",
	Args: []string{"build", "github.com/agentrun/agentrun/mcpclient/mcptest/mcp-test-server"}})

// MarkEnv tags the processes a test starts (servers, and what they start), so that
// Processes can find them in the process table.
const MarkEnv = "AGENTRUN_TEST_MARK"

// Processes lists the host pids of the live processes (zombies left out) whose
// environment holds MarkEnv=mark: those of a test's servers that still run.
func Processes(mark string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	want := []byte(MarkEnv + "=" + mark + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append(env, 0), want) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && (st[i+2] == 'Z' || st[i+2] == 'X') {
				continue
			}
		}
		out = append(out, pid)
	}
	return out, nil
}

// Link makes mcp-test-server visible in a sandbox: a hard link (or a copy) in dir named
// name. It returns the command that runs it from dir, "./name".
func Link(tb testing.TB, dir, name string) (string, error) {
	tb.Helper()
	bin := server.Path(tb, "mcp-test-server")
	dst := filepath.Join(dir, name)
	if err := os.Link(bin, dst); err != nil {
		b, err := os.ReadFile(bin)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			return "", err
		}
	}
	return "./" + name, nil
}

// HTTP serves the test server over streamable HTTP on loopback until closed; with a
// token, a request without "Authorization: Bearer <token>" gets 401.
func HTTP(token string) *httptest.Server {
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return NewServer() }, nil)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://example.invalid/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
}

type textIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

type sizeIn struct {
	Bytes int `json:"bytes"`
}

type empty struct{}

// NewServer builds the test server: tools echo, add (structured output), fail (a tool
// error), big (that many bytes), hang (never answers), crash (exits mid-call), garble
// (writes what is not JSON), ask and sample (elicitation and sampling), env (its
// environment and working directory).
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "agentrun-test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, sumOut, error) {
			return nil, sumOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails as a tool."},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the disk is full"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns that many bytes."},
		func(_ context.Context, _ *mcp.CallToolRequest, in sizeIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("b", in.Bytes)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answers."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits mid-call."},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "panic: the test server crashes")
			os.Exit(2)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "garble", Description: "Writes what is not JSON."},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			_, _ = fmt.Fprintln(os.Stdout, "this is not JSON")
			time.Sleep(time.Hour) // the client gives up on the connection first
			return nil, nil, nil
		})
	// ask and sample ask the client for input the way that works on every protocol
	// version: a result of input requests, which the SDK turns into a request of the
	// server for clients older than 2026-07-28.
	object := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "ask", Description: "Asks the user.", InputSchema: object},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["branch"].(*mcp.ElicitResult); ok {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the user chose: " + r.Action}}}, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"branch": &mcp.ElicitParams{Message: "Which branch?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"branch": map[string]any{"type": "string"}}}}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "sample", Description: "Asks the client's model.", InputSchema: object},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// The sampling types are deprecated, but servers may still send such requests:
			// this one tests that agentrun declines them.
			if _, ok := req.Params.InputResponses["completion"].(*mcp.CreateMessageResult); ok { //nolint:staticcheck // SA1019: see above
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a completion came back"}}}, nil
			}
			ask := &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}} //nolint:staticcheck // SA1019: see above
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"completion": ask}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Shows the server's environment and folder."},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			wd, _ := os.Getwd()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "cwd=" + wd + "\n" + strings.Join(os.Environ(), "\n")}}}, nil, nil
		})
	return s
}

// ServeStdio runs the stdio server of mode: ok, exit (at start), hang-init (never
// answers initialize), slow-list (tools/list takes a minute) or invalid-json (writes
// a line that is not JSON first).
func ServeStdio(mode string) int {
	s := NewServer()
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: no configuration found")
		return 1
	case "hang-init":
		buf := make([]byte, 4096)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				return 0
			}
		}
	case "slow-list":
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" {
					select {
					case <-ctx.Done():
					case <-time.After(time.Minute):
					}
				}
				return next(ctx, method, req)
			}
		})
	case "invalid-json":
		_, _ = fmt.Fprintln(os.Stdout, "Starting server on stdio... (a log line on stdout)")
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

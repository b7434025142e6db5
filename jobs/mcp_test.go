package jobs

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMCPServersResolve(t *testing.T) {
	env := map[string]string{"GH_TOKEN": "s3cr3t-gh", "DB_URL": "https://db.example/mcp", "LEVEL": "debug"}
	tests := map[string]struct {
		defaults, job []string
		want          []MCPServer
	}{
		"stdio and http with defaults": {
			defaults: []string{"mcp_servers:",
				"    files: {command: npx, args: [-y, server-files, .], env: {LOG: '${LEVEL}'}}",
				`    gh: {url: "https://api.example/mcp", headers: {Authorization: "Bearer ${GH_TOKEN}"}, required: true}`},
			want: []MCPServer{
				{Name: "files", Type: MCPStdio, Command: "npx", Args: []string{"-y", "server-files", "."},
					Env: map[string]string{"LOG": "${LEVEL}"}, StartupTimeout: 30 * time.Second, CallTimeout: time.Minute},
				{Name: "gh", Type: MCPHTTP, URL: "https://api.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${GH_TOKEN}"},
					Required: true, StartupTimeout: 30 * time.Second, CallTimeout: time.Minute},
			},
		},
		"a job's entry replaces the defaults' entry, others are inherited": {
			defaults: []string{"mcp_servers:", "    a: {command: one, required: true}", "    b: {command: two}"},
			job:      []string{"mcp_servers:", "      a: {command: three, startup_timeout: 500ms, call_timeout: 2s, tools: {allow: [read_*], deny: [read_secret]}}"},
			want: []MCPServer{
				{Name: "a", Type: MCPStdio, Command: "three", StartupTimeout: 500 * time.Millisecond, CallTimeout: 2 * time.Second,
					Allow: []string{"read_*"}, Deny: []string{"read_secret"}},
				{Name: "b", Type: MCPStdio, Command: "two", StartupTimeout: 30 * time.Second, CallTimeout: time.Minute},
			},
		},
		"enabled false turns an inherited server off": {
			defaults: []string{"mcp_servers:", "    a: {command: one}", "    b: {command: two}"},
			job:      []string{"mcp_servers: {a: {enabled: false}}"},
			want:     []MCPServer{{Name: "b", Type: MCPStdio, Command: "two", StartupTimeout: 30 * time.Second, CallTimeout: time.Minute}},
		},
		"an explicit type and a url from the environment, kept as written": {
			job: []string{"mcp_servers: {db: {type: http, url: '${DB_URL}', tools: {allow: []}}}"},
			want: []MCPServer{{Name: "db", Type: MCPHTTP, URL: "${DB_URL}", Allow: []string{},
				StartupTimeout: 30 * time.Second, CallTimeout: time.Minute}},
		},
		"none": {},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			lines := []string{"version: 1"}
			if tt.defaults != nil {
				lines = append(lines, "defaults:")
				for _, l := range tt.defaults {
					lines = append(lines, "  "+l)
				}
			}
			lines = append(lines, "jobs:", "  - id: a", "    prompt: hi")
			for _, l := range tt.job {
				lines = append(lines, "    "+l)
			}
			s := parseOK(t, t.TempDir(), doc(lines...), env)
			sessions := sessionsOK(t, s)
			require.Len(t, sessions, 1)
			assert.Equal(t, tt.want, sessions[0].Settings.MCPServers)
			assert.NotContains(t, sessions[0].Digest, "s3cr3t")
		})
	}
}

// TestMCPSecretsStayOutOfDigests checks that a rotated token does not change a
// session's digest, since the digest holds the text as written.
func TestMCPSecretsStayOutOfDigests(t *testing.T) {
	spec := doc("version: 1", "jobs:", "  - id: a", "    prompt: hi",
		`    mcp_servers: {gh: {url: "https://x.example/mcp", headers: {Authorization: "Bearer ${T}"}}}`)
	dir := t.TempDir()
	one := sessionsOK(t, parseOK(t, dir, spec, map[string]string{"T": "token-one"}))
	two := sessionsOK(t, parseOK(t, dir, spec, map[string]string{"T": "token-two"}))
	assert.Equal(t, one[0].Digest, two[0].Digest)
}

func TestMCPServersInvalid(t *testing.T) {
	head := []string{"version: 1", "jobs:", "  - id: a", "    prompt: hi", "    mcp_servers:"}
	spec := func(lines ...string) string { return doc(append(append([]string(nil), head...), lines...)...) }
	testInvalid(t, []invalidCase{
		{name: "neither command nor url", give: spec("      gh: {required: true}"),
			wantLine: 6, wantCol: 11, wantField: "jobs[0].mcp_servers.gh", wantMsg: "missing command (a stdio server) or url"},
		{name: "both command and url", give: spec("      gh: {command: x, url: 'http://h/mcp'}"),
			wantLine: 6, wantCol: 29, wantField: "jobs[0].mcp_servers.gh.url", wantMsg: "set either command (stdio, at 6:21) or url"},
		{name: "headers on a stdio server", give: spec("      gh: {command: x, headers: {A: b}}"),
			wantLine: 6, wantCol: 33, wantField: "jobs[0].mcp_servers.gh.headers", wantMsg: "headers is for http servers; this one is stdio"},
		{name: "args on an http server", give: spec("      gh: {url: 'https://h/mcp', args: [a]}"),
			wantLine: 6, wantCol: 40, wantField: "jobs[0].mcp_servers.gh.args", wantMsg: "args is for stdio servers; this one is http"},
		{name: "type contradicts", give: spec("      gh: {type: http, command: x}"),
			wantLine: 6, wantCol: 18, wantField: "jobs[0].mcp_servers.gh.type", wantMsg: "type http needs url, not command"},
		{name: "sse", give: spec("      gh: {type: sse, url: 'https://h/sse'}"),
			wantLine: 6, wantCol: 18, wantField: "jobs[0].mcp_servers.gh.type", wantMsg: "sse, the deprecated HTTP+SSE transport, is not supported"},
		{name: "unknown type", give: spec("      gh: {type: websocket, url: 'https://h'}"),
			wantLine: 6, wantCol: 18, wantField: "jobs[0].mcp_servers.gh.type", wantMsg: `unknown MCP transport "websocket"`},
		{name: "bad server name", give: spec("      my.server: {command: x}"),
			wantLine: 6, wantCol: 7, wantField: "jobs[0].mcp_servers.my.server", wantMsg: "use letters, digits, '_' and '-'"},
		{name: "bad header name", give: spec("      gh: {url: 'https://h/mcp', headers: {'X Token': y}}"),
			wantLine: 6, wantCol: 44, wantField: "jobs[0].mcp_servers.gh.headers.X Token", wantMsg: "not an HTTP header name"},
		{name: "not an http url", give: spec("      gh: {url: 'ftp://h/mcp'}"),
			wantLine: 6, wantCol: 17, wantField: "jobs[0].mcp_servers.gh.url", wantMsg: `url "ftp://h/mcp": want an http:// or https:// address`},
		{name: "a url from the environment is not shown", give: spec("      gh: {url: '${U}'}"), env: map[string]string{"U": "s3cr3t"},
			wantLine: 6, wantCol: 17, wantField: "jobs[0].mcp_servers.gh.url", wantMsg: `url value: want an http:// or https:// address (from "${U}")`},
		{name: "undefined variable in a header", give: spec("      gh: {url: 'https://h/mcp', headers: {A: '${NOPE}'}}"),
			wantLine: 6, wantCol: 47, wantField: "jobs[0].mcp_servers.gh.headers.A", wantMsg: "undefined variable ${NOPE}"},
		{name: "bad pattern", give: spec("      gh: {command: x, tools: {deny: ['[a']}}"),
			wantLine: 6, wantCol: 39, wantField: "jobs[0].mcp_servers.gh.tools.deny[0]", wantMsg: "invalid pattern"},
		{name: "a string for required", give: spec("      gh: {command: x, required: yes}"),
			wantLine: 6, wantCol: 34, wantField: "jobs[0].mcp_servers.gh.required", wantMsg: `want true or false, got the string "yes"`},
		{name: "a duration without unit", give: spec("      gh: {command: x, call_timeout: 30}"),
			wantLine: 6, wantCol: 38, wantField: "jobs[0].mcp_servers.gh.call_timeout", wantMsg: "has no unit"},
		{name: "a zero startup timeout", give: spec("      gh: {command: x, startup_timeout: 0s}"),
			wantLine: 6, wantCol: 41, wantField: "jobs[0].mcp_servers.gh.startup_timeout", wantMsg: "duration must be positive"},
		{name: "unknown key", give: spec("      gh: {command: x, timeout: 5s}"),
			wantLine: 6, wantCol: 24, wantField: "jobs[0].mcp_servers.gh.timeout", wantMsg: `unknown key "timeout"`},
	})
}

func TestMCPServerExpand(t *testing.T) {
	m := MCPServer{Name: "gh", URL: "https://h/mcp?k=${KEY}", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}", "X": "plain"},
		Env: map[string]string{"A": "${UNSET:-fallback}", "B": "$$HOME"}}
	got, secrets, err := m.Expand(mapEnv(map[string]string{"KEY": "k1", "TOKEN": "t0k3n"}))
	require.NoError(t, err)
	assert.Equal(t, "https://h/mcp?k=k1", got.URL)
	assert.Equal(t, map[string]string{"Authorization": "Bearer t0k3n", "X": "plain"}, got.Headers)
	assert.Equal(t, map[string]string{"A": "fallback", "B": "$HOME"}, got.Env)
	assert.ElementsMatch(t, []string{"k1", "t0k3n"}, secrets)
	assert.Equal(t, "Bearer ${TOKEN}", m.Headers["Authorization"], "the original is unchanged")

	_, _, err = m.Expand(mapEnv(nil))
	assert.ErrorContains(t, err, "mcp server gh: url: undefined variable ${KEY}")
}

func TestMCPServerOffers(t *testing.T) {
	tests := map[string]struct {
		allow, deny []string
		offered     []string
	}{
		"everything":       {offered: []string{"read", "read_all", "write", "delete"}},
		"allow patterns":   {allow: []string{"read*", "write"}, offered: []string{"read", "read_all", "write"}},
		"deny wins":        {allow: []string{"*"}, deny: []string{"delete", "read_?ll"}, offered: []string{"read", "write"}},
		"empty allow list": {allow: []string{}, offered: nil},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := MCPServer{Allow: tt.allow, Deny: tt.deny}
			var got []string
			for _, n := range []string{"read", "read_all", "write", "delete"} {
				if m.Offers(n) {
					got = append(got, n)
				}
			}
			assert.ElementsMatch(t, tt.offered, got)
		})
	}
}

func TestParseMCPConfig(t *testing.T) {
	// The shape of Claude Code's .mcp.json, as it is.
	data := []byte(`{
  "mcpServers": {
    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"DEBUG": "1"}},
    "gh": {"type": "http", "url": "https://api.example/mcp/", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}},
    "local": {"type": "stdio", "command": "./server", "required": true, "call_timeout": "5s"}
  }
}`)
	got, err := ParseMCPConfig(".mcp.json", data, mapEnv(map[string]string{"GH_TOKEN": "x"}))
	require.NoError(t, err)
	d := func(m MCPServer) MCPServer {
		if m.StartupTimeout == 0 {
			m.StartupTimeout = 30 * time.Second
		}
		if m.CallTimeout == 0 {
			m.CallTimeout = time.Minute
		}
		return m
	}
	assert.Equal(t, []MCPServer{
		d(MCPServer{Name: "files", Type: MCPStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "."},
			Env: map[string]string{"DEBUG": "1"}}),
		d(MCPServer{Name: "gh", Type: MCPHTTP, URL: "https://api.example/mcp/", Headers: map[string]string{"Authorization": "Bearer ${GH_TOKEN}"}}),
		d(MCPServer{Name: "local", Type: MCPStdio, Command: "./server", Required: true, CallTimeout: 5 * time.Second}),
	}, got)
}

func TestParseMCPConfigInvalid(t *testing.T) {
	tests := map[string]struct {
		give string
		want []string
	}{
		"not the shape": {give: `{"servers": {}}`,
			want: []string{`.mcp.json:1:2: servers: unknown key "servers"`, `.mcp.json:1:1: mcpServers: missing required key "mcpServers"`}},
		"every problem with its place": {give: "{\n  \"mcpServers\": {\n    \"a\": {\"args\": [\"x\"]},\n    \"b\": {\"command\": 1}\n  }\n}",
			want: []string{`.mcp.json:4:22: mcpServers.b.command: want a string, got the integer 1`,
				`.mcp.json:3:10: mcpServers.a: missing command (a stdio server) or url (an http server)`}},
		"syntax": {give: `{"mcpServers": {`, want: []string{".mcp.json:2:1: yaml:"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseMCPConfig(".mcp.json", []byte(tt.give), nil)
			var se *SpecError
			require.True(t, errors.As(err, &se), "%v", err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestLoadMCPConfigMissing(t *testing.T) {
	_, err := LoadMCPConfig(filepath.Join(t.TempDir(), "nope.json"), nil)
	assert.ErrorContains(t, err, "load mcp config")
}

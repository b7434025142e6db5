package jobs

import (
	"fmt"
	"maps"
	"net/url"
	"path"
	"reflect"
	"slices"
	"strings"
	"time"
)

// MCPServerSettings is one MCP tool server of a session, as written under mcp_servers
// (and in a Claude Code .mcp.json). A job's entry replaces the defaults' entry of the
// same name as a whole; enabled: false turns an inherited server off.
type MCPServerSettings struct {
	Type    *MCPType          `yaml:"type" doc:"stdio (a command) or http (streamable HTTP); inferred from command or url. sse, the deprecated HTTP+SSE transport, is not supported."`
	Command *string           `yaml:"command" limit:"nonempty" doc:"stdio: the server's program, looked up in PATH or relative to the workspace; it runs in the session's sandbox, in its own process group, with the workspace as working directory."`
	Args    []string          `yaml:"args" doc:"stdio: the program's arguments."`
	Env     map[string]string `yaml:"env" scalars:"any" keys:"envname" vars:"late" doc:"stdio: variables added to the server's scrubbed environment (PATH, HOME, LANG, TERM; never a provider key). ${VAR} values are read at session start and are secrets: redacted everywhere."`
	URL     *string           `yaml:"url" limit:"nonempty" check:"url" vars:"late" doc:"http: the server's streamable HTTP endpoint, reached by agentrun itself (not through the sandbox's proxy). ${VAR} values are secrets."`
	Headers map[string]string `yaml:"headers" keys:"header" vars:"late" doc:"http: request headers, such as a static bearer token: {Authorization: \"Bearer ${TOKEN}\"}. ${VAR} values are read at session start and are secrets: redacted everywhere."`
	// Required servers must connect, or the session ends with error_mcp before the
	// first model call.
	Required       *bool             `yaml:"required" doc:"When true, a server that does not connect ends the session with error_mcp before the first model call (default false: it is a warning, and its tools are absent)."`
	Enabled        *bool             `yaml:"enabled" doc:"false turns the server off (an inherited one, say); default true."`
	StartupTimeout *time.Duration    `yaml:"startup_timeout" limit:"positive" doc:"Limit on starting, initializing and listing the tools of the server (default 30s)."`
	CallTimeout    *time.Duration    `yaml:"call_timeout" limit:"positive" doc:"Limit on one tool call (default 60s); past it the call is a tool error and the session goes on."`
	Tools          *MCPToolsSettings `yaml:"tools" doc:"Which of the server's tools are offered, as mcp__<server>__<tool>."`
}

// MCPToolsSettings filter a server's tools, as written; nil means absent.
type MCPToolsSettings struct {
	Allow []string `yaml:"allow" check:"toolpattern" doc:"Tool names (or patterns with *, ? and [...]) to offer; absent offers every tool."`
	Deny  []string `yaml:"deny" check:"toolpattern" doc:"Tool names (or patterns) never offered, even when allowed."`
}

// MCPType is the transport of an MCP server.
type MCPType string

// The MCP transports.
const (
	MCPStdio MCPType = "stdio"
	MCPHTTP  MCPType = "http"
)

func (MCPType) values() []string { return []string{string(MCPStdio), string(MCPHTTP), "sse"} }
func (MCPType) what() string     { return "MCP transport" }

// Defaults of an MCP server.
const (
	DefaultMCPStartupTimeout = 30 * time.Second
	DefaultMCPCallTimeout    = 60 * time.Second
	// MaxMCPName is the longest server name: mcp__NAME__TOOL must stay a valid tool
	// name for every provider.
	MaxMCPName = 40
)

// MCPServer is a resolved MCP server. Env, URL and Headers hold the text as written,
// ${VAR} unexpanded, so that no secret reaches a digest or a plan; Expand reads them.
type MCPServer struct {
	Name           string            `json:"name"`
	Type           MCPType           `json:"type"`
	Command        string            `json:"command,omitempty"`
	Args           []string          `json:"args,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	URL            string            `json:"url,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	Required       bool              `json:"required"`
	StartupTimeout time.Duration     `json:"startup_timeout"`
	CallTimeout    time.Duration     `json:"call_timeout"`
	Allow          []string          `json:"allow,omitempty"`
	Deny           []string          `json:"deny,omitempty"`
}

// Expand returns m with ${VAR} in Env, URL and Headers read from lookup, and the
// values the variables gave, which are secrets.
func (m MCPServer) Expand(lookup func(string) (string, bool)) (MCPServer, []string, error) {
	var secrets []string
	record := func(name string) (string, bool) {
		v, ok := lookup(name)
		if ok && v != "" {
			secrets = append(secrets, v)
		}
		return v, ok
	}
	expand := func(what, s string) (string, error) {
		out, _, err := expandVars(s, record)
		if err != nil {
			return "", fmt.Errorf("mcp server %s: %s: %w", m.Name, what, err)
		}
		return out, nil
	}
	out := m
	var err error
	if out.URL, err = expand("url", m.URL); err != nil {
		return MCPServer{}, nil, err
	}
	for _, f := range []struct {
		what string
		dst  *map[string]string
	}{{"env", &out.Env}, {"headers", &out.Headers}} {
		if *f.dst == nil {
			continue
		}
		src := *f.dst
		*f.dst = make(map[string]string, len(src))
		for _, k := range slices.Sorted(maps.Keys(src)) {
			if (*f.dst)[k], err = expand(f.what+"."+k, src[k]); err != nil {
				return MCPServer{}, nil, err
			}
		}
	}
	return out, secrets, nil
}

// Offers reports whether the filter lets the server's tool name through: allowed (or
// no allow list) and not denied.
func (m MCPServer) Offers(name string) bool {
	match := func(patterns []string) bool {
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}
	return (m.Allow == nil || match(m.Allow)) && !match(m.Deny)
}

// resolveMCP resolves the servers as written: disabled ones are left out, the rest
// sorted by name with their defaults filled in. It returns nil for none.
func resolveMCP(servers map[string]MCPServerSettings) []MCPServer {
	var out []MCPServer
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		w := servers[name]
		if w.Enabled != nil && !*w.Enabled {
			continue
		}
		m := MCPServer{Name: name, Type: MCPStdio, Args: slices.Clone(w.Args), Env: maps.Clone(w.Env),
			Headers: maps.Clone(w.Headers), StartupTimeout: DefaultMCPStartupTimeout, CallTimeout: DefaultMCPCallTimeout}
		set(&m.Command, w.Command)
		set(&m.URL, w.URL)
		if w.URL != nil {
			m.Type = MCPHTTP
		}
		set(&m.Type, w.Type)
		set(&m.Required, w.Required)
		set(&m.StartupTimeout, w.StartupTimeout)
		set(&m.CallTimeout, w.CallTimeout)
		if t := w.Tools; t != nil {
			m.Allow, m.Deny = slices.Clone(t.Allow), slices.Clone(t.Deny)
			if t.Allow != nil && m.Allow == nil {
				m.Allow = []string{} // an empty allow list offers nothing
			}
		}
		out = append(out, m)
	}
	return out
}

// checkMCP reports what is wrong with the servers written at path (the mcp_servers
// mapping) beyond what decoding checks: one transport per server, with only its own
// keys.
func checkMCP(servers map[string]MCPServerSettings, path string, at func(string) position, ps *problems, has func(string) bool) {
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		w := servers[name]
		p := join(path, name)
		if has(p) {
			continue // reported while decoding
		}
		if w.Enabled != nil && !*w.Enabled {
			continue
		}
		typ := MCPStdio
		switch {
		case w.Type != nil:
			typ = *w.Type
		case w.URL != nil:
			typ = MCPHTTP
		}
		if typ == "sse" {
			ps.add(at(join(p, "type")), join(p, "type"), "sse, the deprecated HTTP+SSE transport, is not supported: agentrun speaks streamable HTTP (type http) to a url")
			continue
		}
		switch {
		case w.Command != nil && w.URL != nil:
			ps.add(at(join(p, "url")), join(p, "url"), "set either command (stdio, at %s) or url (http), not both", at(join(p, "command")))
			continue
		case w.Command == nil && w.URL == nil:
			ps.add(at(p), p, "missing command (a stdio server) or url (an http server)")
			continue
		case typ == MCPStdio && w.Command == nil:
			ps.add(at(join(p, "type")), join(p, "type"), "type stdio needs command, not url")
			continue
		case typ == MCPHTTP && w.URL == nil:
			ps.add(at(join(p, "type")), join(p, "type"), "type http needs url, not command")
			continue
		}
		wrong := map[MCPType][]string{MCPStdio: {"headers"}, MCPHTTP: {"args", "env"}}
		for _, key := range wrong[typ] {
			if _, set := positionOf(at, join(p, key)); set {
				ps.add(at(join(p, key)), join(p, key), "%s is for %s servers; this one is %s", key, otherType(typ), typ)
			}
		}
	}
}

func otherType(t MCPType) MCPType {
	if t == MCPStdio {
		return MCPHTTP
	}
	return MCPStdio
}

// positionOf returns the position recorded for path and whether one is.
func positionOf(at func(string) position, path string) (position, bool) {
	p := at(path)
	return p, p != position{}
}

// checkMCPName returns why name cannot name an MCP server, or "".
func checkMCPName(name string) string {
	switch {
	case name == "":
		return "empty MCP server name"
	case len(name) > MaxMCPName:
		return fmt.Sprintf("MCP server name %q is longer than %d bytes", name, MaxMCPName)
	}
	for i := range len(name) {
		c := name[i]
		if !alnum(c) && c != '_' && c != '-' {
			return fmt.Sprintf("MCP server name %q: use letters, digits, '_' and '-' (its tools are named mcp__NAME__TOOL)", name)
		}
	}
	return ""
}

// checkHeaderName returns why name cannot be an HTTP header name, or "".
func checkHeaderName(name string) string {
	if name == "" {
		return "empty header name"
	}
	for i := range len(name) {
		c := name[i]
		if !alnum(c) && strings.IndexByte("!#$%&'*+-.^_`|~", c) < 0 {
			return fmt.Sprintf("%q is not an HTTP header name", name)
		}
	}
	return ""
}

// checkURL returns why s cannot be an MCP server's url (a message that may hold
// valueMark), or "".
func checkURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "invalid url " + valueMark
	case u.Scheme != "http" && u.Scheme != "https":
		return "url " + valueMark + ": want an http:// or https:// address"
	case u.Host == "":
		return "url " + valueMark + " has no host"
	}
	return ""
}

// checkToolPattern returns why s cannot be an entry of tools.allow or tools.deny, or "".
func checkToolPattern(s string) string {
	if s == "" {
		return "empty tool name"
	}
	if _, err := path.Match(s, ""); err != nil {
		return "invalid pattern " + valueMark + ": " + err.Error()
	}
	return ""
}

// MCPConfig is a Claude Code .mcp.json file: {"mcpServers": {NAME: {...}}}. Its
// entries take the keys of mcp_servers (Claude Code's type, command, args, env, url and
// headers, and agentrun's required, timeouts and tools).
type MCPConfig struct {
	MCPServers map[string]MCPServerSettings `yaml:"mcpServers" keys:"mcpname" required:"true" doc:"MCP servers by name."`
}

// LoadMCPConfig reads a .mcp.json file (JSON, or YAML of the same shape) and returns
// its servers resolved. Every problem is reported together, with file, line and
// column, as a *SpecError; ${VAR} references are checked against env.
func LoadMCPConfig(path string, env func(string) (string, bool)) ([]MCPServer, error) {
	data, err := readSpec(path)
	if err != nil {
		return nil, fmt.Errorf("load mcp config: %w", err)
	}
	if len(data) > MaxSpecBytes {
		return nil, fmt.Errorf("load mcp config %s: %w (over %d bytes)", path, ErrTooLarge, MaxSpecBytes)
	}
	return ParseMCPConfig(path, data, env)
}

// ParseMCPConfig parses the content of a .mcp.json file read from path; see
// LoadMCPConfig.
func ParseMCPConfig(path string, data []byte, env func(string) (string, bool)) ([]MCPServer, error) {
	ps := &problems{file: path}
	root := parseYAML(data, ps)
	if root == nil {
		return nil, ps.err()
	}
	pos := map[string]position{}
	var cfg MCPConfig
	d := newDecoder(ps, env, pos)
	d.decode(root, reflect.ValueOf(&cfg).Elem(), "", opts{})
	at := func(p string) position { return pos[p] }
	has := func(p string) bool {
		for _, pr := range ps.list {
			if rest, ok := strings.CutPrefix(pr.Field, p); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
				return true
			}
		}
		return false
	}
	checkMCP(cfg.MCPServers, "mcpServers", at, ps, has)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return resolveMCP(cfg.MCPServers), nil
}

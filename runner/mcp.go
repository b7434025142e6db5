package runner

import (
	"context"
	"fmt"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/mcpclient"
	"github.com/agentrun/agentrun/protocol"
)

// MCPConfigs turns resolved MCP servers into the client's configs, reading their
// ${VAR} values with lookup. The values read are secrets.
func MCPConfigs(servers []jobs.MCPServer, lookup func(string) (string, bool)) ([]mcpclient.Config, []string, error) {
	var out []mcpclient.Config
	var secrets []string
	for _, m := range servers {
		x, sec, err := m.Expand(lookup)
		if err != nil {
			return nil, nil, err
		}
		secrets = append(secrets, sec...)
		out = append(out, mcpclient.Config{Name: x.Name, Command: x.Command, Args: x.Args, Env: x.Env, URL: x.URL,
			Headers: x.Headers, Required: x.Required, StartupTimeout: x.StartupTimeout, CallTimeout: x.CallTimeout,
			Offers: x.Offers})
	}
	return out, secrets, nil
}

// mcpSecrets are the values the MCP servers of s read from the environment.
func mcpSecrets(opts Options, s jobs.Session) []string {
	_, secrets, err := MCPConfigs(s.Settings.MCPServers, opts.LookupEnv)
	if err != nil {
		return nil // openMCP reports it
	}
	return secrets
}

// connectMCP connects the MCP servers of a session: stdio ones in its sandbox's worker,
// each within its startup timeout. It returns nil for a session without servers.
func connectMCP(ctx context.Context, configs []mcpclient.Config, sb *Sandbox, activity func(), version string) *mcpclient.Set {
	if len(configs) == 0 {
		return nil
	}
	opts := mcpclient.Options{Activity: activity, Version: version}
	if sb != nil && sb.client != nil {
		opts.Starter = sb.client
	}
	activity()
	defer activity() // connecting is agentrun's own work, never a silent tool
	return mcpclient.Connect(ctx, configs, opts)
}

// openMCP connects the MCP servers of a session of the run.
func (st *runState) openMCP(ctx context.Context, s jobs.Session, sb *Sandbox, activity func()) (*mcpclient.Set, error) {
	configs, _, err := MCPConfigs(s.Settings.MCPServers, st.r.opts.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	return connectMCP(ctx, configs, sb, activity, st.r.opts.Version), nil
}

// requiredDown is the error of a session whose required MCP server did not connect, nil
// when none is down. Its status is error_mcp.
func requiredDown(set *mcpclient.Set) *protocol.Error {
	if set == nil {
		return nil
	}
	down, ok := set.RequiredDown()
	if !ok {
		return nil
	}
	return &protocol.Error{Kind: protocol.ErrMCP, Message: fmt.Sprintf("required MCP server %s did not connect (%s): %s",
		down.Name, down.Status, down.Reason)}
}

// serverTools is set as the agent's MCP tools, nil when there are none.
func serverTools(set *mcpclient.Set) agent.ServerTools {
	if set == nil {
		return nil
	}
	return set
}

// attachMCP writes the servers' statuses, and from then on their events, to the
// session's sink, which must be safe for concurrent use.
func attachMCP(set *mcpclient.Set, sink agent.Sink) {
	set.Attach(func(m protocol.Message) { _ = sink.Write(m) })
}

package sink

import (
	"github.com/agentrun/agentrun/protocol"
)

// mcpLine is the text rendering of an mcp_status event: "◇ mcp github: connected
// (12 tools)", or the status and its reason.
func mcpLine(s *protocol.MCPServer) (string, string) {
	if s == nil {
		s = &protocol.MCPServer{}
	}
	line := "◇ mcp " + fold(s.Name, maxCallArg) + ": " + fold(s.Status, maxCallArg)
	if s.Up() {
		line += " (" + plural(s.ToolCount, "tool") + ")"
	}
	if s.Reason != "" {
		line += ": " + fold(Clean(s.Reason), 2*maxCallArg)
	}
	switch {
	case s.Status == protocol.MCPConnected:
		return styleDim, line
	case s.Up():
		return styleYellow, line
	case s.Required:
		return styleRed, line
	}
	return styleYellow, line
}

// claudeMCPStatus is a server's status word in Claude Code's system/init mcp_servers:
// connected, failed or needs-auth.
func claudeMCPStatus(status string) string {
	switch status {
	case protocol.MCPConnected, protocol.MCPRestarted:
		return "connected"
	case protocol.MCPNeedsAuth:
		return "needs-auth"
	}
	return "failed"
}

// claudeMCPServers is the mcp_servers member of system/init.
func claudeMCPServers(list []protocol.MCPServer) []claudeMCP {
	out := make([]claudeMCP, 0, len(list))
	for _, s := range list {
		out = append(out, claudeMCP{Name: s.Name, Status: claudeMCPStatus(s.Status)})
	}
	return out
}

// mcpInfo is the system/informational line of an mcp_status event: a notice for a
// server that was restarted, a warning for one that is down. A server that connected
// has no line: system/init lists it.
func mcpInfo(m protocol.Message) (claudeInfo, bool) {
	s := protocol.MCPServer{}
	if m.MCP != nil {
		s = *m.MCP
	}
	content := "MCP server " + s.Name + ": " + s.Status
	if s.Up() {
		content += " (" + plural(s.ToolCount, "tool") + ")"
	}
	if s.Reason != "" {
		content += ": " + s.Reason
	}
	level := "warning"
	switch s.Status {
	case protocol.MCPConnected:
		return claudeInfo{}, false
	case protocol.MCPRestarted:
		level = "notice"
	}
	return claudeInfo{Type: "system", Subtype: "informational", Level: level, Tag: "mcp_status", Content: content,
		ParentToolUseID: optParent(m.Parent)}, true
}

// redactMCP returns a copy of list with the free text of each server redacted.
func (r *Redactor) redactMCP(list []protocol.MCPServer) []protocol.MCPServer {
	if list == nil {
		return nil
	}
	out := make([]protocol.MCPServer, len(list))
	for i, s := range list {
		s.Name, s.Transport, s.Status, s.Reason = r.redact(s.Name), r.redact(s.Transport), r.redact(s.Status), r.redact(s.Reason)
		out[i] = s
	}
	return out
}

package protocol

import (
	"bufio"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MCPServer is the state of one MCP tool server of a session: an mcp_status event
// (KindMCPStatus), an entry of session_start's and of the result's mcp_servers.
type MCPServer struct {
	// Name is the server's name in the spec; its tools are offered as
	// mcp__<Name>__<tool>.
	Name string `json:"name"`
	// Transport is "stdio" or "http".
	Transport string `json:"transport"`
	// Status is one of the MCP* status words.
	Status string `json:"status"`
	// Reason says why a server is not connected (or what it did), for people; empty
	// when it connected.
	Reason string `json:"reason"`
	// ToolCount is how many of its tools are offered to the model.
	ToolCount int `json:"tool_count"`
	// Required servers must connect for the session to start.
	Required bool `json:"required"`
	// Restarts counts the restarts after a crash (at most one per session).
	Restarts int `json:"restarts"`
}

// The MCP server statuses. The first four are what connecting at session start ends
// with; a server that was connected can later crash, and be restarted.
const (
	MCPConnected = "connected"
	MCPFailed    = "failed"
	MCPTimeout   = "timeout"
	MCPNeedsAuth = "needs_auth"
	MCPCrashed   = "crashed"
	MCPRestarted = "restarted"
)

// MCPStatuses lists every MCP server status in a stable order.
func MCPStatuses() []string {
	return []string{MCPConnected, MCPFailed, MCPTimeout, MCPNeedsAuth, MCPCrashed, MCPRestarted}
}

// Up reports whether the server is serving its tools.
func (s MCPServer) Up() bool { return s.Status == MCPConnected || s.Status == MCPRestarted }

// appendMCPMembers writes the members of s after the ones o holds: nameKey names the
// server ("server" in an mcp_status event, "name" in a list).
func appendMCPMembers(o *jsonObject, s MCPServer, nameKey string) {
	o.str(nameKey, s.Name)
	o.str("transport", s.Transport)
	o.str("status", s.Status)
	o.str("reason", s.Reason)
	o.int("tool_count", int64(s.ToolCount))
	o.bool("required", s.Required)
	o.int("restarts", int64(s.Restarts))
}

// appendMCPList writes the mcp_servers member when list holds a server.
func appendMCPList(o *jsonObject, list []MCPServer) {
	if len(list) == 0 {
		return
	}
	o.key("mcp_servers")
	o.buf = append(o.buf, '[')
	for i, s := range list {
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		so := jsonObject{buf: append(o.buf, '{'), first: true}
		appendMCPMembers(&so, s, "name")
		o.buf = append(so.buf, '}')
	}
	o.buf = append(o.buf, ']')
}

// normalMCP gives a decoded list the form AppendEvent writes: nil when empty.
func normalMCP(list []MCPServer) []MCPServer {
	if len(list) == 0 {
		return nil
	}
	return list
}

func mcpOrZero(s *MCPServer) MCPServer {
	if s == nil {
		return MCPServer{}
	}
	return *s
}

// mcpFields are the positional fields of one server in RESP, in the order of its
// members.
func mcpFields(s MCPServer) []string {
	return []string{s.Name, s.Transport, s.Status, s.Reason, strconv.Itoa(s.ToolCount), boolField(s.Required),
		strconv.Itoa(s.Restarts)}
}

// mcpOf reads the fields of one server.
func mcpOf(p *fieldParser) *MCPServer {
	return &MCPServer{Name: p.next(), Transport: p.next(), Status: p.next(), Reason: p.next(),
		ToolCount: int(p.int()), Required: p.flag(), Restarts: int(p.int())}
}

// extMCP is the trailing pair of one entry of mcp_servers in SESSION_START and RESULT;
// its value is a frame of the entry's positional fields, so every byte survives.
const extMCP = "mcp_server"

func addMCPExt(f *frame, list []MCPServer) {
	for _, s := range list {
		f.fields = append(f.fields, extMCP, string(AppendFrame(nil, mcpFields(s)...)))
	}
}

// parseMCPExt decodes the value of one mcp_server pair.
func parseMCPExt(value string) (MCPServer, error) {
	fields, err := splitFrame(value)
	if err != nil {
		return MCPServer{}, fmt.Errorf("%w: %s: %w", ErrMalformed, extMCP, err)
	}
	p := fieldParser{kind: KindMCPStatus, rest: fields}
	s := mcpOf(&p)
	if p.err == nil && len(p.rest) != 0 {
		p.fail("has %d fields too many", len(p.rest))
	}
	if p.err != nil {
		return MCPServer{}, p.err
	}
	return *s, nil
}

// splitFrame decodes s, which must hold exactly one frame, into its fields.
func splitFrame(s string) ([]string, error) {
	d := FrameDecoder{d: RESPDecoder{r: bufio.NewReaderSize(strings.NewReader(s), 512), maxFrame: len(s)}}
	if !d.Next() {
		if err := d.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("no frame")
	}
	fields := slices.Clone(d.Fields())
	if d.Next() || d.Err() != nil {
		return nil, errors.New("bytes after the frame")
	}
	return fields, nil
}

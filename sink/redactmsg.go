package sink

import (
	"encoding/json"
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// redactMessage returns m with every string field redacted. The structs m points to are
// copied, never changed: the caller may still hold them.
func (r *Redactor) redactMessage(m protocol.Message) protocol.Message {
	if len(r.forms) == 0 {
		return m
	}
	red := r.redact
	m.Parent, m.Text, m.Signature, m.Redacted = red(m.Parent), red(m.Text), red(m.Signature), red(m.Redacted)
	m.Call = protocol.ToolCall{Name: red(m.Call.Name), ID: red(m.Call.ID), Input: r.redactJSON(m.Call.Input), Server: red(m.Call.Server)}
	m.Result.ToolUseID, m.Result.Name, m.Result.Content = red(m.Result.ToolUseID), red(m.Result.Name), red(m.Result.Content)
	m.Result.Server = red(m.Result.Server)
	m.UsageKind, m.SubSession, m.Reason = red(m.UsageKind), red(m.SubSession), red(m.Reason)
	m.Stop = protocol.StopReason(red(string(m.Stop)))
	m.Err = protocol.Error{Kind: protocol.ErrorKind(red(string(m.Err.Kind))), Message: red(m.Err.Message)}
	m.Context = protocol.ContextUpdate{Kind: red(m.Context.Kind), Trigger: red(m.Context.Trigger)}
	if m.Sub != nil {
		s := *m.Sub
		s.SessionID, s.Description, s.Prompt, s.Status = red(s.SessionID), red(s.Description), red(s.Prompt), red(s.Status)
		s.Thinking, s.Text, s.Timestamp = red(s.Thinking), red(s.Text), red(s.Timestamp)
		m.Sub = &s
	}
	if m.Session != nil {
		s := *m.Session
		s.SessionID, s.JobID, s.Provider, s.Model = red(s.SessionID), red(s.JobID), red(s.Provider), red(s.Model)
		s.Cwd, s.TS = red(s.Cwd), red(s.TS)
		if s.Tools != nil {
			s.Tools = make([]string, len(m.Session.Tools))
			for i, t := range m.Session.Tools {
				s.Tools[i] = red(t)
			}
		}
		s.MCPServers = r.redactMCP(s.MCPServers)
		m.Session = &s
	}
	if m.MCP != nil {
		m.MCP = &r.redactMCP([]protocol.MCPServer{*m.MCP})[0]
	}
	if m.Final != nil {
		m.Final = r.redactResult(*m.Final)
	}
	if m.Violation != nil { // issue 12: a refused target may name a secret
		m.Violation = &protocol.Violation{Kind: red(m.Violation.Kind), Target: red(m.Violation.Target)}
	}
	return m
}

// String returns s with every secret masked.
func (r *Redactor) String(s string) string { return r.redact(s) }

// JSON returns a JSON text with the secrets masked inside its strings, keys and
// numbers; valid JSON stays valid.
func (r *Redactor) JSON(raw []byte) []byte { return []byte(r.redactJSON(string(raw))) }

// RedactResult returns a copy of res with the secrets masked in every free-text field.
// The identifying and structural fields (ids, key, status, digest) are kept as they
// are: they come from agentrun, not from a model or a tool.
func (r *Redactor) RedactResult(res *protocol.Result) *protocol.Result {
	if res == nil {
		return nil
	}
	return r.redactResult(*res)
}

func (r *Redactor) redactResult(f protocol.Result) *protocol.Result {
	red := r.redact
	f.StopReason, f.Result = protocol.StopReason(red(string(f.StopReason))), red(f.Result)
	if f.StructuredOutput != nil {
		f.StructuredOutput = json.RawMessage(r.redactJSON(string(f.StructuredOutput)))
	}
	if f.Error != nil {
		f.Error = &protocol.Error{Kind: protocol.ErrorKind(red(string(f.Error.Kind))), Message: red(f.Error.Message)}
	}
	if f.Checks != nil {
		checks := make([]protocol.Check, len(f.Checks))
		for i, c := range f.Checks {
			c.Name, c.Output = red(c.Name), red(c.Output)
			checks[i] = c
		}
		f.Checks = checks
	}
	f.MCPServers = r.redactMCP(f.MCPServers)
	return &f
}

// redactJSON redacts raw, which should hold a JSON value. Valid JSON is redacted inside
// its string values and keys, each decoded first so that any escaping of a secret is
// seen, and in its number literals; what changes is written back as a JSON string, so
// the value stays valid JSON. Anything else is redacted as plain text, and so is a
// secret that only appears across the JSON structure.
func (r *Redactor) redactJSON(raw string) string {
	if len(r.forms) == 0 || raw == "" {
		return raw
	}
	if !json.Valid([]byte(raw)) {
		return r.redact(raw)
	}
	if !strings.Contains(raw, `\`) && r.redact(raw) == raw {
		return raw // no escapes: every string reads as it is written, and holds no secret
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '"':
			end := stringEnd(raw, i)
			lit := raw[i:end]
			var s string
			if err := json.Unmarshal([]byte(lit), &s); err == nil {
				if enc := r.literal(lit, s); enc != lit {
					b.WriteString(enc)
					changed = true
					i = end
					continue
				}
			}
			b.WriteString(lit)
			i = end
		case isLiteralByte(c):
			j := i
			for j < len(raw) && isLiteralByte(raw[j]) {
				j++
			}
			if tok := raw[i:j]; r.redact(tok) != tok {
				b.WriteString(`"` + Mask + `"`)
				changed = true
			} else {
				b.WriteString(tok)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	out := raw
	if changed {
		out = b.String()
	}
	// A secret that spans the JSON structure itself, such as `a","b`, is masked as
	// text: no secret may survive, even at the cost of validity (the event encoders
	// then carry the input as a string).
	return r.redact(out)
}

// literal returns the JSON string literal lit, which reads as s, with the secrets of
// s masked. When its text still spells a secret, through its escapes (the b of \b for
// the secret "b"), it is written again in the encoder's escapes, and when even those
// spell one, the whole string becomes Mask: the value stays valid JSON either way.
func (r *Redactor) literal(lit, s string) string {
	red := r.redact(s)
	if red == s && r.redact(lit) == lit {
		return lit
	}
	if enc := quoteJSON(red, false); r.redact(enc) == enc {
		return enc
	}
	return `"` + Mask + `"`
}

// stringEnd returns the index after the JSON string literal that starts at raw[i].
func stringEnd(raw string, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// isLiteralByte reports whether c belongs to a JSON number or true/false/null.
func isLiteralByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '+' || c == '-'
}

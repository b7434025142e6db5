package protocol

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// The fields after the type name follow the seed's order for each kind. Fields agentrun
// adds to a seed kind (a sub-agent's parent id, a thinking signature, …) come last as
// name/value pairs, so a seed reader that only looks at the leading fields still
// understands the frame. The kinds agentrun adds (SESSION_START, SUB_AGENT_START,
// SUB_AGENT_END, RESULT) are positional throughout, so every string travels byte for
// byte, invalid UTF-8 included.

// Names of the trailing extension pairs.
const (
	extParent     = "parent_tool_use_id"
	extSignature  = "signature"
	extRedacted   = "redacted"
	extUsageKind  = "kind"
	extSubSession = "sub_session_id"
	extCacheRead  = "cache_read"
	extCacheWrite = "cache_creation"
	extDesc       = "description"
	extPrompt     = "prompt"
	extTimestamp  = "timestamp"
	extSandbox    = "sandbox_level"
	extLayers     = "sandbox_layers"
	extServer     = "server"
)

// frame accumulates the fields of one message being encoded.
type frame struct {
	fields []string
}

func (f *frame) add(s ...string) { f.fields = append(f.fields, s...) }

func (f *frame) ext(name, value string) {
	if value != "" {
		f.fields = append(f.fields, name, value)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func boolField(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// countField encodes the length of a list, with "" standing for a nil list so that
// nil and empty survive the round trip.
func countField(n int, isNil bool) string {
	if isNil {
		return ""
	}
	return strconv.Itoa(n)
}

// fieldsOf returns the fields of m after the type name.
func fieldsOf(m Message) ([]string, error) {
	var f frame
	switch m.Kind {
	case KindText:
		f.add(m.Text)
	case KindThinking:
		f.add(m.Text)
		f.ext(extSignature, m.Signature)
		f.ext(extRedacted, m.Redacted)
	case KindToolCall:
		f.add(m.Call.Name, m.Call.ID, m.Call.Input)
		for _, kv := range InputMembers(m.Call.Input) {
			f.add(kv[0], kv[1])
		}
		f.ext(extServer, m.Call.Server)
	case KindToolResult:
		f.add(m.Result.ToolUseID, m.Result.Name, m.Result.Content, boolField(m.Result.IsError))
		f.ext(extServer, m.Result.Server)
	case KindUsage:
		u := m.Usage
		f.add(itoa(u.Input), itoa(u.Output), itoa(u.CacheRead), itoa(u.CacheCreation))
		f.ext(extUsageKind, m.UsageKind)
		f.ext(extSubSession, m.SubSession)
	case KindStop:
		f.add(string(m.Stop))
	case KindContextUpdate:
		f.add(m.Context.Kind, m.Context.Trigger)
	case KindSubAgentResult:
		s := subOrZero(m.Sub)
		f.add(s.SessionID, s.Status, itoa(s.Usage.Input), itoa(s.Usage.Output), s.Thinking, s.Text)
		if s.Usage.CacheRead != 0 {
			f.ext(extCacheRead, itoa(s.Usage.CacheRead))
		}
		if s.Usage.CacheCreation != 0 {
			f.ext(extCacheWrite, itoa(s.Usage.CacheCreation))
		}
		f.ext(extDesc, s.Description)
		f.ext(extPrompt, s.Prompt)
		f.ext(extTimestamp, s.Timestamp)
	case KindError:
		f.add(string(m.Err.Kind), m.Err.Message)
	case KindRetry:
		f.add(strconv.Itoa(m.Attempt), itoa(m.DelayMS), m.Reason)
	case KindSessionStart:
		s := sessionOrZero(m.Session)
		f.add(s.SessionID, s.JobID, s.Provider, s.Model, s.Cwd, s.TS, countField(len(s.Tools), s.Tools == nil))
		f.add(s.Tools...)
		addProvenanceExt(&f, s.Provenance, false)
		if s.Sandbox != nil {
			f.add(extSandbox, s.Sandbox.Level, extLayers, s.Sandbox.joinLayers())
		}
		addMCPExt(&f, s.MCPServers)
	case KindSubAgentStart:
		s := subOrZero(m.Sub)
		f.add(s.SessionID, s.Description, s.Prompt, s.Timestamp)
	case KindSubAgentEnd:
		s := subOrZero(m.Sub)
		f.add(s.SessionID, s.Status, s.Timestamp)
	case KindSandboxViolation:
		v := violationOrZero(m.Violation)
		f.add(v.Kind, v.Target)
	case KindMCPStatus:
		f.add(mcpFields(mcpOrZero(m.MCP))...)
	case KindResult:
		r := resultOrZero(m.Final)
		addResult(&f, r)
		if r.Sandbox != nil {
			f.add(extSandbox, r.Sandbox.Level, extLayers, r.Sandbox.joinLayers())
		}
		addProvenanceExt(&f, r.Provenance, true)
		addMCPExt(&f, r.MCPServers)
	default:
		return nil, fmt.Errorf("encode: invalid kind %d", m.Kind)
	}
	f.ext(extParent, m.Parent)
	return f.fields, nil
}

// addResult appends the positional fields of a RESULT frame. A cost that is not a
// finite number is written as null ("").
func addResult(f *frame, r Result) {
	cost := ""
	if r.TotalCostUSD != nil && !math.IsNaN(*r.TotalCostUSD) && !math.IsInf(*r.TotalCostUSD, 0) {
		cost = strconv.FormatFloat(*r.TotalCostUSD, 'g', -1, 64)
	}
	f.add(r.SessionID, r.JobID, string(r.Status), boolField(r.IsError), string(r.StopReason),
		strconv.Itoa(r.NumTurns), itoa(r.DurationMS), itoa(r.DurationAPIMS),
		itoa(r.Usage.Input), itoa(r.Usage.Output), itoa(r.Usage.CacheRead), itoa(r.Usage.CacheCreation),
		cost, r.Result, string(r.StructuredOutput), strconv.Itoa(r.Retries), strconv.Itoa(r.Attempts),
		r.SpecDigest, r.Key)
	if r.Error == nil {
		f.add("", "", "")
	} else {
		f.add("1", string(r.Error.Kind), r.Error.Message)
	}
	f.add(countField(len(r.Checks), r.Checks == nil))
	for _, c := range r.Checks {
		f.add(c.Name, boolField(c.Passed), strconv.Itoa(c.ExitCode), itoa(c.DurationMS), c.Output)
	}
}

func violationOrZero(v *Violation) Violation {
	if v == nil {
		return Violation{}
	}
	return *v
}

func subOrZero(s *SubAgent) SubAgent {
	if s == nil {
		return SubAgent{}
	}
	return *s
}

func sessionOrZero(s *SessionStart) SessionStart {
	if s == nil {
		return SessionStart{}
	}
	return *s
}

func resultOrZero(r *Result) Result {
	if r == nil {
		return Result{}
	}
	return *r
}

// messageOf builds a message of kind k from the fields of a frame after the type name.
func messageOf(k Kind, fields []string) (Message, error) {
	p := fieldParser{kind: k, rest: fields}
	m := Message{Kind: k}
	switch k {
	case KindText:
		m.Text = p.next()
	case KindThinking:
		m.Text = p.next()
	case KindToolCall:
		m.Call = ToolCall{Name: p.next(), ID: p.next(), Input: p.next()}
		p.skip(2 * len(InputMembers(m.Call.Input)))
	case KindToolResult:
		m.Result = ToolResult{ToolUseID: p.next(), Name: p.next(), Content: p.next(), IsError: p.flag()}
	case KindUsage:
		m.Usage = Usage{Input: p.int(), Output: p.int(), CacheRead: p.int(), CacheCreation: p.int()}
	case KindStop:
		m.Stop = StopReason(p.next())
	case KindContextUpdate:
		m.Context = ContextUpdate{Kind: p.next(), Trigger: p.next()}
	case KindSubAgentResult:
		s := SubAgent{SessionID: p.next(), Status: p.next()}
		s.Usage.Input, s.Usage.Output = p.int(), p.int()
		s.Thinking, s.Text = p.next(), p.next()
		m.Sub = &s
	case KindError:
		m.Err = Error{Kind: ErrorKind(p.next()), Message: p.next()}
	case KindRetry:
		m.Attempt = int(p.int())
		m.DelayMS = p.int()
		m.Reason = p.next()
	case KindSessionStart:
		s := SessionStart{SessionID: p.next(), JobID: p.next(), Provenance: Provenance{Provider: p.next(), Model: p.next()},
			Cwd: p.next(), TS: p.next()}
		s.Tools = list(&p, 1, p.next)
		m.Session = &s
	case KindSubAgentStart:
		m.Sub = &SubAgent{SessionID: p.next(), Description: p.next(), Prompt: p.next(), Timestamp: p.next()}
	case KindSubAgentEnd:
		m.Sub = &SubAgent{SessionID: p.next(), Status: p.next(), Timestamp: p.next()}
	case KindSandboxViolation:
		m.Violation = &Violation{Kind: p.next(), Target: p.next()}
	case KindMCPStatus:
		m.MCP = mcpOf(&p)
	case KindResult:
		m.Final = p.result()
	}
	if p.err != nil {
		return Message{}, p.err
	}
	if len(p.rest)%2 != 0 {
		return Message{}, fmt.Errorf("%w: %s has an odd number of trailing fields", ErrMalformed, k)
	}
	for i := 0; i < len(p.rest); i += 2 {
		if err := m.setExt(p.rest[i], p.rest[i+1]); err != nil {
			return Message{}, err
		}
	}
	return m, nil
}

// setExt applies one trailing name/value pair. Unknown names are ignored so that newer
// writers stay readable.
func (m *Message) setExt(name, value string) error {
	if name == extParent {
		m.Parent = value
		return nil
	}
	var prov *Provenance
	switch {
	case m.Kind == KindSessionStart && m.Session != nil:
		prov = &m.Session.Provenance
	case m.Kind == KindResult && m.Final != nil:
		prov = &m.Final.Provenance
	}
	if prov != nil {
		if ok, err := setProvenance(prov, name, value); ok {
			return err
		}
	}
	if name == extMCP {
		var list *[]MCPServer
		switch {
		case m.Kind == KindSessionStart && m.Session != nil:
			list = &m.Session.MCPServers
		case m.Kind == KindResult && m.Final != nil:
			list = &m.Final.MCPServers
		default:
			return nil
		}
		s, err := parseMCPExt(value)
		if err != nil {
			return err
		}
		*list = append(*list, s)
		return nil
	}
	if name == extServer {
		switch m.Kind {
		case KindToolCall:
			m.Call.Server = value
			return nil
		case KindToolResult:
			m.Result.Server = value
			return nil
		default:
			// Other kinds have no server: the extension is ignored below.
		}
	}
	if name == extSandbox || name == extLayers {
		var sb **Sandbox
		switch {
		case m.Kind == KindSessionStart && m.Session != nil:
			sb = &m.Session.Sandbox
		case m.Kind == KindResult && m.Final != nil:
			sb = &m.Final.Sandbox
		default:
			return nil
		}
		if *sb == nil {
			*sb = &Sandbox{Layers: []string{}}
		}
		if name == extSandbox {
			(*sb).Level = value
		} else {
			(*sb).Layers = splitLayers(value)
		}
		return nil
	}
	switch m.Kind {
	case KindThinking:
		switch name {
		case extSignature:
			m.Signature = value
		case extRedacted:
			m.Redacted = value
		}
	case KindUsage:
		switch name {
		case extUsageKind:
			m.UsageKind = value
		case extSubSession:
			m.SubSession = value
		}
	case KindSubAgentResult:
		switch name {
		case extCacheRead, extCacheWrite:
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return fmt.Errorf("%w: %s is not a number", ErrMalformed, name)
			}
			if name == extCacheRead {
				m.Sub.Usage.CacheRead = n
			} else {
				m.Sub.Usage.CacheCreation = n
			}
		case extDesc:
			m.Sub.Description = value
		case extPrompt:
			m.Sub.Prompt = value
		case extTimestamp:
			m.Sub.Timestamp = value
		}
	default:
		// Other kinds have no extension fields: unknown ones are ignored.
	}
	return nil
}

// fieldParser consumes positional fields, remembering the first error.
type fieldParser struct {
	kind Kind
	rest []string
	err  error
}

func (p *fieldParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: %s "+format, append([]any{ErrMalformed, p.kind}, args...)...)
	}
}

func (p *fieldParser) next() string {
	if len(p.rest) == 0 {
		p.fail("has too few fields")
		return ""
	}
	s := p.rest[0]
	p.rest = p.rest[1:]
	return s
}

func (p *fieldParser) skip(n int) {
	if n > len(p.rest) {
		p.fail("has too few fields")
		p.rest = nil
		return
	}
	p.rest = p.rest[n:]
}

func (p *fieldParser) int() int64 {
	s := p.next()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		p.fail("field %.32q is not a number", s)
	}
	return n
}

func (p *fieldParser) flag() bool {
	switch s := p.next(); s {
	case "1":
		return true
	case "0", "":
		return false
	default:
		p.fail("flag %.32q is not 0 or 1", s)
		return false
	}
}

// list reads a count field ("" for nil) and then count items of width fields each.
func list[T any](p *fieldParser, width int, item func() T) []T {
	s := p.next()
	if s == "" || p.err != nil {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > len(p.rest)/width {
		p.fail("list count %.32q is not valid", s)
		return nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = item()
	}
	return out
}

func (p *fieldParser) result() *Result {
	r := Result{SessionID: p.next(), JobID: p.next(), Status: Status(p.next()), IsError: p.flag(),
		StopReason: StopReason(p.next()), NumTurns: int(p.int()), DurationMS: p.int(), DurationAPIMS: p.int()}
	r.Usage = Usage{Input: p.int(), Output: p.int(), CacheRead: p.int(), CacheCreation: p.int()}
	if s := p.next(); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			p.fail("cost %.32q is not a finite number", s)
		}
		r.TotalCostUSD = &v
	}
	r.Result = p.next()
	if s := p.next(); s != "" {
		r.StructuredOutput = json.RawMessage(s)
	}
	r.Retries, r.Attempts = int(p.int()), int(p.int())
	r.SpecDigest, r.Key = p.next(), p.next()
	hasErr, kind, msg := p.next(), p.next(), p.next()
	switch hasErr {
	case "":
	case "1":
		r.Error = &Error{Kind: ErrorKind(kind), Message: msg}
	default:
		p.fail("error flag %.32q is not empty or 1", hasErr)
	}
	r.Checks = list(p, 5, func() Check {
		return Check{Name: p.next(), Passed: p.flag(), ExitCode: int(p.int()), DurationMS: p.int(), Output: p.next()}
	})
	return &r
}

package scripted

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/yamljson"
)

// maxInputNodes bounds the YAML nodes visited while converting tool inputs, so that
// aliases cannot expand a small script into a huge one.
const maxInputNodes = 1 << 18

type parser struct {
	name   string
	budget int // the tool-input values still allowed, shared by the whole script
}

func (p *parser) errf(n *yaml.Node, field, format string, args ...any) error {
	return &ScriptError{Name: p.name, Line: n.Line, Column: n.Column, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// fields walks the members of mapping n, rejecting duplicates and calling fn for each.
func (p *parser) fields(n *yaml.Node, path string, fn func(key string, v *yaml.Node, field string) error) error {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return p.errf(n, path, "want a mapping, got %s", yamljson.Describe(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := yamljson.Join(path, k.Value)
		if seen[k.Value] {
			return p.errf(k, field, "duplicate field")
		}
		seen[k.Value] = true
		if err := fn(k.Value, deref(v), field); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) script(n *yaml.Node) (*Script, error) {
	s := &Script{}
	var hasSteps bool
	err := p.fields(n, "", func(key string, v *yaml.Node, field string) error {
		switch key {
		case "steps":
			hasSteps = true
			var err error
			s.Steps, err = p.steps(v, field)
			return err
		}
		return p.errf(v, field, "unknown field (want steps)")
	})
	if err != nil {
		return nil, err
	}
	if !hasSteps {
		return nil, p.errf(deref(n), "steps", "missing")
	}
	return s, nil
}

// steps reads a list of steps; null is none.
func (p *parser) steps(n *yaml.Node, path string) ([]Step, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, path, "want a list of steps, got %s", yamljson.Describe(n))
	}
	var out []Step
	for i, sn := range n.Content {
		st, err := p.step(deref(sn), yamljson.Index(path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func (p *parser) step(n *yaml.Node, path string) (Step, error) {
	var st Step
	err := p.fields(n, path, func(key string, v *yaml.Node, field string) error {
		var err error
		switch key {
		case "thinking":
			st.Thinking, err = p.str(v, field)
		case "text":
			st.Text, err = p.str(v, field)
		case "stop":
			var word string
			word, err = p.str(v, field)
			st.Stop = protocol.StopReason(word)
			if err == nil && !slices.Contains(protocol.StopReasons(), st.Stop) {
				err = p.errf(v, field, "unknown stop reason %q", word)
			}
		case "tool_calls":
			st.ToolCalls, err = p.toolCalls(v, field)
		case "usage":
			st.Usage, err = p.usage(v, field)
		case "fault":
			st.Fault, err = p.fault(v, field)
		default:
			err = p.errf(v, field, "unknown field (want thinking, text, tool_calls, stop, usage or fault)")
		}
		return err
	})
	if err != nil {
		return Step{}, err
	}
	switch {
	case st.Stop == "" && len(st.ToolCalls) > 0:
		st.Stop = protocol.StopToolUse
	case st.Stop == "":
		st.Stop = protocol.StopEndTurn
	case st.Stop == protocol.StopToolUse && len(st.ToolCalls) == 0:
		return Step{}, p.errf(n, path+".stop", "tool_use needs tool_calls")
	case st.Stop != protocol.StopToolUse && len(st.ToolCalls) > 0:
		// The Chat and Responses formats derive the stop from the calls, so any other
		// reason could not be served the same way in every format.
		return Step{}, p.errf(n, path+".stop", "%s with tool_calls: a step with tool calls stops with tool_use", st.Stop)
	}
	return st, nil
}

func (p *parser) toolCalls(n *yaml.Node, path string) ([]ToolCall, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, path, "want a list of tool calls, got %s", yamljson.Describe(n))
	}
	var calls []ToolCall
	for i, cn := range n.Content {
		field := yamljson.Index(path, i)
		c := ToolCall{Input: "{}"}
		var stepsNode *yaml.Node
		err := p.fields(cn, field, func(key string, v *yaml.Node, field string) error {
			switch key {
			case "name":
				var err error
				c.Name, err = p.str(v, field)
				return err
			case "steps":
				var err error
				stepsNode = v
				if c.Steps, err = p.steps(v, field); err == nil && c.Steps == nil {
					c.Steps = []Step{} // null or []: a sub-agent with nothing to say
				}
				return err
			case "input":
				if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
					return nil
				}
				if v.Kind != yaml.MappingNode {
					return p.errf(v, field, "want a mapping, got %s", yamljson.Describe(v))
				}
				b, err := yamljson.Append(nil, v, field, yamljson.Options{Budget: &p.budget})
				if e, ok := errors.AsType[*yamljson.Error](err); ok {
					return p.errf(e.Node, e.Path, "%s", e.Msg)
				}
				c.Input = string(b)
				return nil
			}
			return p.errf(v, field, "unknown field (want name, input or steps)")
		})
		if err != nil {
			return nil, err
		}
		if c.Name == "" {
			return nil, p.errf(deref(cn), field+".name", "missing")
		}
		if stepsNode != nil && c.Name != SubAgentTool {
			return nil, p.errf(stepsNode, field+".steps", "only a %s call starts a sub-agent with steps of its own, not %s", SubAgentTool, c.Name)
		}
		calls = append(calls, c)
	}
	return calls, nil
}

func (p *parser) usage(n *yaml.Node, path string) (*Usage, error) {
	u := &Usage{}
	err := p.fields(n, path, func(key string, v *yaml.Node, field string) error {
		x, err := p.count(v, field)
		if err != nil {
			return err
		}
		switch key {
		case "input":
			u.Input = &x
		case "output":
			u.Output = &x
		case "cache_read":
			u.CacheRead = x
		case "cache_creation":
			u.CacheCreation = x
		default:
			return p.errf(v, field, "unknown field (want input, output, cache_read or cache_creation)")
		}
		return nil
	})
	return u, err
}

func (p *parser) fault(n *yaml.Node, path string) (*Fault, error) {
	f := &Fault{Times: 1}
	setKind := func(k FaultKind, v *yaml.Node, field string) error {
		if f.Kind != 0 {
			return p.errf(v, field, "a fault has one kind, already %s", f.Kind)
		}
		f.Kind = k
		return nil
	}
	flag := func(k FaultKind, v *yaml.Node, field string) error {
		on, err := p.boolean(v, field)
		if err != nil || !on {
			return err
		}
		return setKind(k, v, field)
	}
	var statusOnly *yaml.Node
	var statusField string
	err := p.fields(n, path, func(key string, v *yaml.Node, field string) error {
		var err error
		switch key {
		case "times":
			var t int64
			t, err = p.count(v, field)
			if err == nil && t < 1 {
				err = p.errf(v, field, "want at least 1")
			}
			f.Times = int(min(t, 1<<30))
		case "status":
			var s int64
			if s, err = p.count(v, field); err == nil && (s < 400 || s > 599) {
				err = p.errf(v, field, "want an HTTP error status (400 to 599), got %d", s)
			}
			f.Status = int(s)
			if err == nil {
				err = setKind(FaultStatus, v, field)
			}
		case "retry_after":
			f.RetryAfter, err = p.duration(v, field, time.Second)
			statusOnly, statusField = v, field
		case "retry_after_ms":
			f.RetryAfterPrecise, err = p.duration(v, field, time.Millisecond)
			statusOnly, statusField = v, field
		case "body":
			f.Body, err = p.str(v, field)
			statusOnly, statusField = v, field
		case "header":
			f.Header, err = p.header(v, field)
			statusOnly, statusField = v, field
		case "cut":
			err = flag(FaultCut, v, field)
		case "stall":
			err = flag(FaultStall, v, field)
		case "malformed":
			err = flag(FaultMalformed, v, field)
		case "eof":
			err = flag(FaultEOF, v, field)
		case "error_event":
			if f.ErrorType, err = p.str(v, field); err == nil && f.ErrorType == "" {
				err = p.errf(v, field, "want an error type such as overloaded_error")
			}
			if err == nil {
				err = setKind(FaultErrorEvent, v, field)
			}
		case "panic":
			if f.Message, err = p.str(v, field); err == nil {
				err = setKind(FaultPanic, v, field)
			}
		default:
			err = p.errf(v, field, "unknown field (want status, cut, stall, malformed, eof, error_event, panic, times, retry_after, retry_after_ms, body or header)")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if f.Kind == 0 {
		return nil, p.errf(n, path, "want one of status, cut, stall, malformed, eof, error_event or panic")
	}
	if statusOnly != nil && f.Kind != FaultStatus {
		return nil, p.errf(statusOnly, statusField, "only a status fault takes this field, not %s", f.Kind)
	}
	return f, nil
}

func (p *parser) header(n *yaml.Node, path string) (map[string]string, error) {
	h := map[string]string{}
	err := p.fields(n, path, func(key string, v *yaml.Node, field string) error {
		if v.Kind != yaml.ScalarNode {
			return p.errf(v, field, "want a scalar, got %s", yamljson.Describe(v))
		}
		h[key] = v.Value
		return nil
	})
	return h, err
}

func (p *parser) str(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", p.errf(n, field, "want a string, got %s", yamljson.Describe(n))
	}
	return n.Value, nil
}

func (p *parser) boolean(n *yaml.Node, field string) (bool, error) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		return false, p.errf(n, field, "want true or false, got %s", yamljson.Describe(n))
	}
	return b, nil
}

func (p *parser) count(n *yaml.Node, field string) (int64, error) {
	var x int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&x) != nil {
		return 0, p.errf(n, field, "want an integer, got %s", yamljson.Describe(n))
	}
	if x < 0 {
		return 0, p.errf(n, field, "want a non-negative integer, got %d", x)
	}
	return x, nil
}

// duration reads a Go duration ("1s", "250ms") or a plain number of units.
func (p *parser) duration(n *yaml.Node, field string, unit time.Duration) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!int", "!!float":
			f, err := strconv.ParseFloat(n.Value, 64)
			if err == nil && f >= 0 && f < float64(24*time.Hour/unit) {
				return time.Duration(f * float64(unit)), nil
			}
		case "!!str":
			d, err := time.ParseDuration(n.Value)
			if err == nil && d >= 0 {
				return d, nil
			}
		}
	}
	return 0, p.errf(n, field, "want a duration such as \"1s\" or a number, got %q", n.Value)
}

// deref follows an alias to its anchor.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

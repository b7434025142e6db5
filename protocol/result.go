package protocol

import (
	"encoding/json"
	"math"
	"strings"
)

// Status is the outcome of a session, the same word in its result event, result.json
// and every summary.
type Status string

// The session statuses.
const (
	StatusSuccess      Status = "success"
	StatusMaxTurns     Status = "error_max_turns"
	StatusTimeout      Status = "error_timeout"
	StatusInactivity   Status = "error_inactivity"
	StatusBudget       Status = "error_budget"
	StatusMaxTokens    Status = "error_max_tokens"
	StatusProvider     Status = "error_provider"
	StatusAuth         Status = "error_auth"
	StatusRequest      Status = "error_request"
	StatusChecks       Status = "error_checks"
	StatusOutputSchema Status = "error_output_schema"
	StatusCancelled    Status = "cancelled"
	StatusCrashed      Status = "crashed"
	// StatusMCP: a required MCP server did not connect; no model call was made.
	StatusMCP Status = "error_mcp"
	// StatusSandbox: the session's sandbox could not be set up when a tool first
	// needed it, or its level cannot hide what it must (before the first model
	// call); no tool ran.
	StatusSandbox Status = "error_sandbox"
)

// Statuses lists every status in a stable order.
func Statuses() []Status {
	return []Status{
		StatusSuccess, StatusMaxTurns, StatusTimeout, StatusInactivity, StatusBudget,
		StatusMaxTokens, StatusProvider, StatusAuth, StatusRequest, StatusChecks,
		StatusOutputSchema, StatusCancelled, StatusCrashed, StatusMCP, StatusSandbox,
	}
}

// Valid reports whether s is one of the defined statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses() {
		if v == s {
			return true
		}
	}
	return false
}

// Subtype is the Claude Code result subtype of s, the word stream-json consumers
// branch on: "success", "error_max_turns", "error_max_budget_usd",
// "error_max_structured_output_retries", or "error_during_execution" for every other
// failure. The status itself stays the richer word.
func (s Status) Subtype() string {
	switch s {
	case StatusSuccess:
		return "success"
	case StatusMaxTurns:
		return "error_max_turns"
	case StatusBudget:
		return "error_max_budget_usd"
	case StatusOutputSchema:
		return "error_max_structured_output_retries"
	default:
		return "error_during_execution"
	}
}

// Describe is the error as people read it after the status s of its session: the kind
// and the message, the kind left out when s already says it ("error_max_turns" and
// "max_turns") or the message starts with it, and the message without a leading "s: "
// or "kind: ", so that no word is said twice ("error_checks: checks: …").
func (e Error) Describe(s Status) string {
	msg, kind := e.Message, string(e.Kind)
	for trimmed := ""; trimmed != msg; {
		trimmed = msg
		for _, p := range []string{string(s), kind} {
			if p != "" && strings.HasPrefix(msg, p+":") {
				msg = strings.TrimLeft(msg[len(p)+1:], " ")
			}
		}
	}
	switch {
	case kind == "" || string(s) == kind || string(s) == "error_"+kind:
		return msg
	case msg == "":
		return kind
	}
	return kind + ": " + msg
}

// Result is the terminal record of one session: the last event of its stream and the
// content of its result.json.
type Result struct {
	SessionID string `json:"session_id"`
	JobID     string `json:"job_id"`
	// Provenance says what produced the session (provider, model, matrix, ...).
	Provenance
	Status        Status     `json:"status"`
	IsError       bool       `json:"is_error"`
	StopReason    StopReason `json:"stop_reason"`
	NumTurns      int        `json:"num_turns"`
	DurationMS    int64      `json:"duration_ms"`
	DurationAPIMS int64      `json:"duration_api_ms"`
	Usage         Usage      `json:"usage"`
	TotalCostUSD  *float64   `json:"total_cost_usd"`
	// Result is the final assistant text (or the error text when there is none).
	Result string `json:"result"`
	// StructuredOutput is the final answer parsed as JSON when the job has an
	// output_schema; null otherwise.
	StructuredOutput json.RawMessage `json:"structured_output"`
	Checks           []Check         `json:"checks"`
	Error            *Error          `json:"error"`
	// Retries is the number of whole-session retries; Attempts the number of attempts.
	Retries  int `json:"retries"`
	Attempts int `json:"attempts"`
	// SpecDigest ties the result to the job spec that produced it (used by --resume).
	SpecDigest string `json:"spec_digest,omitempty"`
	// Key is the session's stable key within the run.
	Key string `json:"key,omitempty"`
	// Sandbox is the confinement the session's tools ran under.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// MCPServers is the last state of each MCP server of the session; nil for none.
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
}

// Check is the outcome of one post-run check command.
type Check struct {
	Name       string `json:"name"`
	Passed     bool   `json:"passed"`
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
	Output     string `json:"output"`
}

// appendResult writes the members of a result event after the ones o already holds.
// It never fails: a cost that is not a finite number is null, and a structured output
// that is not valid JSON is carried as a string.
func appendResult(o *jsonObject, r Result) {
	o.str("session_id", r.SessionID)
	o.str("job_id", r.JobID)
	appendProvenance(o, r.Provenance)
	o.str("status", string(r.Status))
	o.str("subtype", r.Status.Subtype())
	o.bool("is_error", r.IsError)
	o.str("stop_reason", string(r.StopReason))
	o.int("num_turns", int64(r.NumTurns))
	o.int("duration_ms", r.DurationMS)
	o.int("duration_api_ms", r.DurationAPIMS)
	o.key("usage")
	u := jsonObject{buf: append(o.buf, '{'), first: true}
	u.int("input_tokens", r.Usage.Input)
	u.int("output_tokens", r.Usage.Output)
	u.int("cache_read_input_tokens", r.Usage.CacheRead)
	u.int("cache_creation_input_tokens", r.Usage.CacheCreation)
	o.buf = append(u.buf, '}')
	o.key("total_cost_usd")
	if c := r.TotalCostUSD; c != nil && !math.IsNaN(*c) && !math.IsInf(*c, 0) {
		o.buf = appendFloat(o.buf, *c)
	} else {
		o.buf = append(o.buf, "null"...)
	}
	o.str("result", r.Result)
	o.key("structured_output")
	o.buf = appendJSONValue(o.buf, r.StructuredOutput)
	o.key("checks")
	if r.Checks == nil {
		o.buf = append(o.buf, "null"...)
	} else {
		o.buf = append(o.buf, '[')
		for i, c := range r.Checks {
			if i > 0 {
				o.buf = append(o.buf, ',')
			}
			co := jsonObject{buf: append(o.buf, '{'), first: true}
			co.str("name", c.Name)
			co.bool("passed", c.Passed)
			co.int("exit_code", int64(c.ExitCode))
			co.int("duration_ms", c.DurationMS)
			co.str("output", c.Output)
			o.buf = append(co.buf, '}')
		}
		o.buf = append(o.buf, ']')
	}
	o.key("error")
	if r.Error == nil {
		o.buf = append(o.buf, "null"...)
	} else {
		eo := jsonObject{buf: append(o.buf, '{'), first: true}
		eo.str("kind", string(r.Error.Kind))
		eo.str("message", r.Error.Message)
		o.buf = append(eo.buf, '}')
	}
	o.int("retries", int64(r.Retries))
	o.int("attempts", int64(r.Attempts))
	o.strOpt("spec_digest", r.SpecDigest)
	o.strOpt("key", r.Key)
	appendSandbox(o, r.Sandbox)
	appendMCPList(o, r.MCPServers)
}

// appendSandbox writes the sandbox member when there is one.
func appendSandbox(o *jsonObject, s *Sandbox) {
	if s == nil {
		return
	}
	o.key("sandbox")
	so := jsonObject{buf: append(o.buf, '{'), first: true}
	so.str("level", s.Level)
	layers := s.Layers
	if layers == nil {
		layers = []string{}
	}
	so.strings("layers", layers)
	o.buf = append(so.buf, '}')
}

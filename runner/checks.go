package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
)

// checkTail is how much of a check's output the result keeps.
const checkTail = 4000

// runChecks runs the job's checks in the workspace, in order, and records each; the
// session fails with error_checks when one fails.
func (st *runState) runChecks(ctx context.Context, s jobs.Session, sb *Sandbox, res *protocol.Result) {
	var failed []string
	for _, c := range s.Checks {
		timeout := c.Timeout
		if timeout <= 0 {
			timeout = s.Settings.ToolTimeout
		}
		start := st.r.opts.Now()
		cctx, span := st.startCheck(ctx, s, c.Name)
		out := sb.client.Exec(cctx, c.Run, timeout, 0)
		check := protocol.Check{
			Name: c.Name, ExitCode: out.ExitCode, Passed: out.ExitCode == 0 && !out.TimedOut && out.Err == nil,
			DurationMS: st.r.opts.Now().Sub(start).Milliseconds(),
			Output:     tailOf(out.Output, checkTail),
		}
		if out.TimedOut {
			check.Output += fmt.Sprintf("\n[check timed out after %s]", timeout)
		}
		if out.Err != nil {
			check.Output += "\n[" + out.Err.Error() + "]"
		}
		if span != nil {
			span.End(agent.SpanEnd{Check: &check})
		}
		res.Checks = append(res.Checks, check)
		if !check.Passed {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) > 0 {
		res.Status = protocol.StatusChecks
		res.Error = &protocol.Error{Kind: protocol.ErrChecks, Message: "failed checks: " + strings.Join(failed, ", ")}
	}
}

// tailOf keeps the last max bytes of s, starting at a character boundary.
func tailOf(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := len(s) - max
	for cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut++
	}
	return "…" + s[cut:]
}

// checkOutput parses the final answer as JSON and validates it against the job's
// output_schema; the session fails with error_output_schema when it does not match.
func checkOutput(s jobs.Session, res *protocol.Result) {
	fail := func(msg string) {
		res.Status = protocol.StatusOutputSchema
		res.Error = &protocol.Error{Kind: protocol.ErrSchema, Message: msg}
	}
	doc, raw, err := extractJSON(res.Result)
	if err != nil {
		fail("the final answer is not JSON: " + err.Error())
		return
	}
	schema, err := jobs.CompileOutputSchema(s.OutputSchema)
	if err != nil {
		fail(err.Error()) // the spec was checked when parsed, so this is not expected
		return
	}
	if err := schema.Validate(doc); err != nil {
		fail("the final answer does not match output_schema: " + err.Error())
		return
	}
	res.StructuredOutput = raw
}

// extractJSON finds the JSON answer in a final text: the whole text, else the last
// fenced code block, else the span from the first '{' or '[' to the last '}' or ']'.
func extractJSON(text string) (any, json.RawMessage, error) {
	var candidates []string
	t := strings.TrimSpace(text)
	candidates = append(candidates, t)
	if i := strings.LastIndex(t, "```"); i > 0 {
		if j := strings.LastIndex(t[:i], "```"); j >= 0 {
			block := t[j+3 : i]
			if nl := strings.IndexByte(block, '\n'); nl >= 0 && !strings.ContainsAny(block[:nl], "{[") {
				block = block[nl+1:]
			}
			candidates = append(candidates, strings.TrimSpace(block))
		}
	}
	if i := strings.IndexAny(t, "{["); i >= 0 {
		if j := strings.LastIndexAny(t, "}]"); j > i {
			candidates = append(candidates, t[i:j+1])
		}
	}
	var firstErr error
	for _, c := range candidates {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(c))
		if err == nil {
			var compact strings.Builder
			b, merr := json.Marshal(doc)
			if merr == nil {
				compact.Write(b)
				return doc, json.RawMessage(compact.String()), nil
			}
			err = merr
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, nil, firstErr
}

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
	"github.com/agentrun/agentrun/textcut"
)

// checkTail is how much of the end of a check's output the result keeps (storedOutput
// keeps the lines that name the failure too).
const checkTail = 4000

// runChecks runs the job's checks in the workspace, in order, and records each; the
// session fails with error_checks when one fails, its message naming each failed check
// and why (its exit code, its timeout, or why it could not run).
func (st *runState) runChecks(ctx context.Context, s jobs.Session, sb *Sandbox, res *protocol.Result) {
	var failed [][2]string // name, why
	for _, c := range s.Checks {
		st.progress.doing(s.Key, "check "+c.Name)
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
			Output:     storedOutput(out.Output),
		}
		// The output already ends with "[... command timed out after N seconds ...]"
		// when the check timed out.
		why := fmt.Sprintf("exit code %d", out.ExitCode)
		switch {
		case out.Err != nil:
			check.Output += "\n[" + out.Err.Error() + "]"
			why = "could not run: " + out.Err.Error()
		case out.TimedOut:
			why = "timed out after " + timeout.String()
		}
		if span != nil {
			span.End(agent.SpanEnd{Check: &check})
		}
		res.Checks = append(res.Checks, check)
		if !check.Passed {
			failed = append(failed, [2]string{oneLine(c.Name), why})
		}
	}
	if len(failed) == 0 {
		return
	}
	msg := "check " + failed[0][0] + " failed: " + failed[0][1]
	if len(failed) > 1 {
		var each []string
		for _, f := range failed {
			each = append(each, f[0]+" ("+f[1]+")")
		}
		msg = "checks failed: " + strings.Join(each, ", ")
	}
	res.Status = protocol.StatusChecks
	res.Error = &protocol.Error{Kind: protocol.ErrChecks, Message: msg}
}

// tailOf keeps the end of s in at most n bytes, starting at a character boundary
// after the "…" that marks a cut.
func tailOf(s string, n int) string { return textcut.ClipTail(s, n, textcut.Ellipsis) }

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

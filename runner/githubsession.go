package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// ExecutionFile is the Claude Code stream-json of a single-session run, written next to
// its events in GitHub mode: the file claude-code-action calls the execution file.
const ExecutionFile = "execution.jsonl"

// runOutputs are the step outputs beyond the counts: the conclusion, and for a run of
// a single session its id, its structured output and its execution file.
func runOutputs(sum *Summary, out, status, version string) ([][2]string, error) {
	outputs := [][2]string{{"conclusion", status}}
	if len(sum.Sessions) != 1 {
		return outputs, nil
	}
	row := sum.Sessions[0]
	dir := filepath.Join(out, SessionsDir, row.Key)
	outputs = append(outputs, [2]string{"session-id", row.SessionID})
	var res protocol.Result
	if b, err := os.ReadFile(filepath.Join(dir, ResultFile)); err == nil {
		if err := json.Unmarshal(b, &res); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ResultFile), err)
		}
	}
	if len(res.StructuredOutput) > 0 && string(res.StructuredOutput) != "null" {
		outputs = append(outputs, [2]string{"structured-output", string(res.StructuredOutput)})
	}
	exec, err := writeExecutionFile(dir, version)
	if err != nil {
		return nil, err
	}
	if exec != "" {
		outputs = append(outputs, [2]string{"execution-file", exec})
	}
	return outputs, nil
}

// writeExecutionFile renders a session's events.jsonl (already redacted) as Claude
// Code stream-json into ExecutionFile and returns its absolute path; "" when the
// session has no events.
func writeExecutionFile(dir, version string) (string, error) {
	in, err := os.Open(filepath.Join(dir, EventsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer func() { _ = in.Close() }()
	path := filepath.Join(dir, ExecutionFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return "", err
	}
	claude := sink.NewClaude(f, version)
	r := protocol.NewEventReader(in)
	for r.Next() {
		if err := claude.Write(r.Message()); err != nil {
			_ = f.Close()
			return "", fmt.Errorf("execution file: %w", err)
		}
	}
	if err := r.Err(); err != nil {
		_ = f.Close()
		return "", fmt.Errorf("execution file: %w", err)
	}
	if err := claude.Close(); err != nil {
		_ = f.Close()
		return "", fmt.Errorf("execution file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return filepath.Abs(path)
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/agentrun/agentrun/policy"
	"github.com/agentrun/agentrun/protocol"
)

// MaxWriteBytes is the largest content Write accepts (1 MiB).
const MaxWriteBytes = 1 << 20

// Write is the Write tool: it creates or replaces a file.
type Write struct{}

type writeInput struct {
	Path    *string `json:"path"`
	Content *string `json:"content"`
}

// Spec describes Write.
func (Write) Spec() protocol.ToolSpec {
	return protocol.ToolSpec{
		Name: "Write",
		Description: "Create a file, or replace its whole content. Missing parent directories are created. " +
			"Relative paths are resolved against the workspace. Content is limited to 1 MiB. " +
			"Prefer Edit for changing part of an existing file.",
		InputSchema: schema(`"path":{"type":"string","description":"File to write, absolute or relative to the workspace"},`+
			`"content":{"type":"string","description":"The complete new content of the file"}`, "path", "content"),
	}
}

// Run writes the file.
func (Write) Run(_ context.Context, call Call) Result {
	env := call.Env
	var in writeInput
	if err := decodeInput(call.Input, &in); err != nil {
		return failure(err.Error())
	}
	if in.Path == nil || *in.Path == "" {
		return failure("no path provided")
	}
	path := *in.Path
	if in.Content == nil {
		return failure("no content provided (send an empty string to create an empty file)")
	}
	content := *in.Content
	if len(content) > MaxWriteBytes {
		return failure(fmt.Sprintf("content is %d bytes; Write accepts at most %d bytes (1 MiB): split the file or generate it with a command", len(content), MaxWriteBytes))
	}
	if err := env.policy().CheckPath(policy.OpWrite, path, env.dirs()); err != nil {
		return failure(err.Error())
	}
	if err := writeFile(env, absPath(env, path), []byte(content)); err != nil {
		return failure(writeError(path, err))
	}
	return Result{
		Content: fmt.Sprintf("wrote %d bytes to %s", len(content), path),
	}
}

// writeError turns a write error into a message for the model.
func writeError(path string, err error) string {
	if errors.Is(err, syscall.EISDIR) {
		return path + " is a directory"
	}
	if msg, ok := refusal(path, err); ok {
		return msg
	}
	return fmt.Sprintf("write %s: %v", path, err)
}

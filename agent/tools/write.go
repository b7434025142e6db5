package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentrun/agentrun/protocol"
)

// MaxWriteBytes is the largest content Write accepts (1 MiB).
const MaxWriteBytes = 1 << 20

// errIsDir is the error of writing to a directory.
var errIsDir = errors.New("is a directory")

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
func (Write) Run(_ context.Context, env *Env, input json.RawMessage) Result {
	var in writeInput
	if err := decodeInput(input, &in); err != nil {
		return failure("Write()", err.Error())
	}
	if in.Path == nil || *in.Path == "" {
		return failure("Write()", "no path provided")
	}
	path := *in.Path
	sum := callSummary("Write", path)
	if in.Content == nil {
		return failure(sum, "no content provided (send an empty string to create an empty file)")
	}
	content := *in.Content
	if len(content) > MaxWriteBytes {
		return failure(sum, fmt.Sprintf("content is %d bytes; Write accepts at most %d bytes (1 MiB): split the file or generate it with a command", len(content), MaxWriteBytes))
	}
	if err := env.policy().CheckPath(OpWrite, path, env); err != nil {
		return failure(sum, err.Error())
	}
	abs := absPath(env, path)
	if err := writeFile(abs, []byte(content)); err != nil {
		return failure(sum, writeError(path, err))
	}
	return Result{
		Content: fmt.Sprintf("wrote %d bytes to %s", len(content), path),
		Summary: fmt.Sprintf("%s [%d lines, %d bytes]", sum, countLines([]byte(content)), len(content)),
	}
}

// writeFile creates the parent directories and writes data, keeping the mode of an
// existing file. An existing file is overwritten in place and then cut to the new
// length, rather than truncated to zero first: on ext4 a truncation to zero forces the
// file's data to disk on close, which costs hundreds of microseconds per edit.
func writeFile(abs string, data []byte) error {
	mode := fs.FileMode(0o644)
	exists := false
	if fi, err := os.Stat(abs); err == nil {
		if fi.IsDir() {
			return errIsDir
		}
		if !fi.Mode().IsRegular() {
			return errNotRegular
		}
		mode, exists = fi.Mode().Perm(), true
	}
	if !exists || len(data) == 0 {
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return err
		}
		return os.WriteFile(abs, data, mode)
	}
	f, err := os.OpenFile(abs, os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeError turns a write error into a message for the model.
func writeError(path string, err error) string {
	switch {
	case errors.Is(err, errIsDir):
		return path + " is a directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied: " + path
	case errors.Is(err, errNotRegular):
		return path + " is not a regular file (a device, socket or named pipe)"
	}
	return fmt.Sprintf("write %s: %v", path, err)
}

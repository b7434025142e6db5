package tools

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentrun/agentrun/policy"
	"github.com/agentrun/agentrun/protocol"
)

// MaxEditBytes is the largest file Edit changes (10 MiB), before and after the edit.
const MaxEditBytes = 10 << 20

// Edit is the Edit tool: it replaces an exact string in a file.
type Edit struct{}

type editInput struct {
	Path       *string `json:"path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll flag    `json:"replace_all"`
}

// Spec describes Edit.
func (Edit) Spec() protocol.ToolSpec {
	return protocol.ToolSpec{
		Name: "Edit",
		Description: "Replace an exact string in a file. old_string must match the file byte for byte, including " +
			"whitespace and indentation, and must be unique unless replace_all is true: include enough surrounding " +
			"lines to make it unique. The reply shows the changed lines as a unified diff.",
		InputSchema: schema(`"path":{"type":"string","description":"File to change, absolute or relative to the workspace"},`+
			`"old_string":{"type":"string","description":"The exact text to replace"},`+
			`"new_string":{"type":"string","description":"The replacement text (may be empty to delete)"},`+
			`"replace_all":{"type":"boolean","description":"Replace every occurrence instead of exactly one"}`,
			"path", "old_string", "new_string"),
	}
}

// Run edits the file.
func (Edit) Run(_ context.Context, call Call) Result {
	env := call.Env
	var in editInput
	if err := decodeInput(call.Input, &in); err != nil {
		return failure(err.Error())
	}
	if in.Path == nil || *in.Path == "" {
		return failure("no path provided")
	}
	path := *in.Path
	switch {
	case in.OldString == nil:
		return failure("no old_string provided")
	case in.NewString == nil:
		return failure("no new_string provided (send an empty string to delete old_string)")
	case *in.OldString == "":
		return failure("old_string is empty; use Write to create a file or to replace all of it")
	case *in.OldString == *in.NewString:
		return failure("old_string and new_string are the same; there is nothing to change")
	}
	oldS, newS := *in.OldString, *in.NewString
	for _, op := range []policy.Op{policy.OpRead, policy.OpWrite} {
		if err := env.policy().CheckPath(op, path, env.dirs()); err != nil {
			return failure(err.Error())
		}
	}
	// One open for both: the file read is the file written, checked where it really is.
	abs := absPath(env, path)
	f, fi, err := openFile(env, abs, os.O_RDWR, policy.OpRead, policy.OpWrite)
	if err != nil {
		return failure(fileError(path, err))
	}
	defer func() { _ = f.Close() }()
	if fi.Size() > MaxEditBytes {
		return failure(fmt.Sprintf("%s is %d bytes; Edit changes files of at most %d bytes (10 MiB)", path, fi.Size(), MaxEditBytes))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxEditBytes+1))
	if err != nil {
		return failure(fmt.Sprintf("read %s: %v", path, err))
	}
	if isBinary(data) {
		return failure(path + " is a binary file; Edit changes text files only")
	}
	content := string(data)
	count := strings.Count(content, oldS)
	switch {
	case count == 0:
		return failure("old_string not found in " + path + ". " + notFoundHint(content, oldS))
	case count > 1 && !bool(in.ReplaceAll):
		return failure(fmt.Sprintf("old_string matches %d times in %s; add surrounding lines to old_string to make it unique, or set replace_all to true to replace every match", count, path))
	}
	updated := strings.Replace(content, oldS, newS, 1)
	if in.ReplaceAll {
		updated = strings.ReplaceAll(content, oldS, newS)
	}
	if len(updated) > MaxEditBytes {
		return failure(fmt.Sprintf("the edited file would be %d bytes; Edit writes files of at most %d bytes (10 MiB)", len(updated), MaxEditBytes))
	}
	if err := overwrite(f, []byte(updated)); err != nil {
		return failure(writeError(path, err))
	}
	diff, added, removed := unifiedDiff(displayPath(env, abs), content, updated)
	head := fmt.Sprintf("Edit(%s) [+%d -%d lines]", path, added, removed)
	if count > 1 {
		head += fmt.Sprintf(" (replaced %d occurrences)", count)
	}
	return Result{Content: Truncate(head+"\n"+diff, env.maxOutput())}
}

// notFoundHint explains the likely reason old_string does not match.
func notFoundHint(content, old string) string {
	switch {
	case !strings.Contains(old, "\r\n") && strings.Contains(content, strings.ReplaceAll(old, "\n", "\r\n")):
		return "Hint: the file has CRLF line endings; old_string must contain the \\r characters too."
	case strings.Contains(collapseSpace(content), collapseSpace(old)):
		return "Hint: the text exists with different whitespace; check indentation (tabs or spaces) and trailing spaces, and Read the file to copy it exactly."
	}
	return "Hint: old_string must match the file exactly, including whitespace and indentation; Read the file to copy the current text."
}

// collapseSpace turns every run of white space into one space.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

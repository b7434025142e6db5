package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/agentrun/agentrun/policy"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/textcut"
)

// noteReserve is the room kept under the output cap for the closing note.
const noteReserve = 300

// Read is the Read tool: it shows a text file with numbered lines.
type Read struct{}

type readInput struct {
	Path   *string `json:"path"`
	Offset number  `json:"offset"`
	Limit  number  `json:"limit"`
}

// Spec describes Read.
func (Read) Spec() protocol.ToolSpec {
	return protocol.ToolSpec{
		Name: "Read",
		Description: "Read a text file. Lines are numbered in `cat -n` format (line number, tab, text). " +
			"Relative paths are resolved against the workspace. Use offset (1-based line) and limit (number of lines) " +
			"to read part of a large file; long output is capped and says which offset to continue from. " +
			"Binary files are refused.",
		InputSchema: schema(`"path":{"type":"string","description":"File to read, absolute or relative to the workspace"},`+
			`"offset":{"type":"integer","minimum":1,"description":"First line to show (1-based)"},`+
			`"limit":{"type":"integer","minimum":1,"description":"Number of lines to show"}`, "path"),
	}
}

// Run reads the file.
func (Read) Run(ctx context.Context, call Call) Result {
	env := call.Env
	var in readInput
	if err := decodeInput(call.Input, &in); err != nil {
		return failure(err.Error())
	}
	if in.Path == nil || *in.Path == "" {
		return failure("no path provided")
	}
	path := *in.Path
	switch {
	case in.Offset.set && in.Offset.n < 1:
		return failure("offset must be 1 or more: the first line is 1")
	case in.Limit.set && in.Limit.n < 1:
		return failure("limit must be 1 or more")
	}
	if err := env.policy().CheckPath(policy.OpRead, path, env.dirs()); err != nil {
		return failure(err.Error())
	}
	f, fi, err := openFile(env, absPath(env, path), os.O_RDONLY, policy.OpRead)
	if err != nil {
		return failure(fileError(path, err))
	}
	defer func() { _ = f.Close() }()
	// A buffer the size of the file, up to 64 KiB: most files read are small.
	br := bufio.NewReaderSize(f, int(min(max(fi.Size()+1, sniffLen), 64<<10)))
	if head, _ := br.Peek(sniffLen); isBinary(head) {
		return failure(fmt.Sprintf("%s is a binary file (%d bytes); Read shows text files only", path, fi.Size()))
	}
	out, total, err := numberLines(ctx, br, in.Offset.n, in.Limit.n, env.maxOutput())
	if err != nil {
		return failure(fmt.Sprintf("read %s: %v", path, err))
	}
	start := max(in.Offset.n, 1)
	switch {
	case total == 0:
		out = "[" + path + " is empty]"
	case start > int64(total):
		out = fmt.Sprintf("[offset %d is past the end of %s, which has %d lines]", start, path, total)
	}
	return Result{Content: out}
}

// numberLines renders lines offset… (1-based; 0 means 1) of r, at most limit of them
// (0 means all), in cat -n format within maxOut bytes, and ends with a note when
// lines remain. It returns the text and the file's line count.
func numberLines(ctx context.Context, r *bufio.Reader, offset, limit int64, maxOut int) (string, int, error) {
	start := max(offset, 1)
	budget := max(maxOut-noteReserve, minTruncate)
	var b strings.Builder
	lr := newLineReader(r, budget)
	var n, last int64
	capped, cutLine := false, false
	for lr.next() {
		n++
		if n%8192 == 0 && ctx.Err() != nil {
			return "", 0, ctx.Err()
		}
		if n < start || capped || (limit > 0 && n >= start+limit) {
			continue
		}
		entry := fmt.Sprintf("%6d\t%s\n", n, sanitize(lr.line))
		if b.Len()+len(entry) > budget {
			capped = true
			if last == 0 { // a single line over the cap: show its start
				b.WriteString(textcut.Head(entry, budget))
				b.WriteString("\n")
				last, cutLine = n, true
			}
			continue
		}
		b.WriteString(entry)
		last = n
	}
	if err := lr.Err(); err != nil {
		return "", 0, err
	}
	switch {
	case cutLine:
		fmt.Fprintf(&b, "[... line %d is longer than %d bytes and was cut; use Grep or Bash (cut -c) to see the rest ...]\n", last, budget)
		if last < n {
			fmt.Fprintf(&b, "[... continue with offset=%d ...]\n", last+1)
		}
	case capped:
		fmt.Fprintf(&b, "[... output capped at %d bytes: showed lines %d-%d of %d; continue with offset=%d ...]\n", budget, start, last, n, last+1)
	case last > 0 && last < n:
		fmt.Fprintf(&b, "[... showed lines %d-%d of %d; continue with offset=%d ...]\n", start, last, n, last+1)
	}
	return b.String(), int(n), nil
}

// errNotRegular is the error of opening a device, socket or named pipe.
var errNotRegular = errors.New("not a regular file")

// fileError turns an open or stat error into a message for the model.
func fileError(path string, err error) string {
	if msg, ok := refusal(path, err); ok {
		return msg
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "file not found: " + path
	case errors.Is(err, syscall.ENOTDIR):
		return "file not found: " + path + " (a parent is not a directory)"
	case errors.Is(err, syscall.EISDIR):
		return path + " is a directory; use Glob to list its files"
	}
	return err.Error()
}

// refusal turns the errors that the file tools share (a policy denial, a file that
// must not be touched) into a message for the model.
func refusal(path string, err error) (string, bool) {
	var denied *policy.DeniedError
	var links *hardLinkError
	switch {
	case errors.As(err, &denied):
		return denied.Error(), true
	case errors.As(err, &links):
		return path + " is " + links.Error(), true
	case errors.Is(err, fs.ErrPermission):
		return "permission denied: " + path, true
	case errors.Is(err, errNotRegular):
		return path + " is not a regular file (a device, socket or named pipe)", true
	case errors.Is(err, errMagicLink):
		return "refusing " + path + ": " + errMagicLink.Error(), true
	case errors.Is(err, errSwapped):
		return "refusing " + path + ": " + errSwapped.Error(), true
	}
	return "", false
}

package runner

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/textcut"
)

// What one session contributes to report.html at most, in bytes of text before
// compression: the report of 1,000 sessions stays a file a browser opens at once, and
// the whole of each file stays in the session's folder, which the report names.
const (
	reportResultHead     = 4 << 10   // the final answer, from its start
	reportCheckTail      = checkTail // each check's output, its end (result.json keeps no more)
	reportTranscriptTail = 12 << 10  // transcript.txt, its end
	reportToolsBudget    = 12 << 10  // the tool calls' inputs and outputs, the latest calls first
	reportToolField      = 1 << 10   // one tool call's input or output, from its start
	reportChangesHead    = 12 << 10  // changes.patch, or the Write and Edit calls, from the start
)

// textPart is a part of a text of Size bytes: its start, or its end when Tail is set,
// with Cut bytes left out.
type textPart struct {
	Text string `json:"text"`
	Size int    `json:"size"`
	Cut  int    `json:"cut,omitempty"`
	Tail bool   `json:"tail,omitempty"`
}

// headOf is the textPart of the first n bytes of s, cut at a character boundary.
func headOf(s string, n int) textPart {
	return headOfSize(s, len(s), n)
}

// headOfSize is the textPart of the first n bytes of s, the start of a text of size
// bytes.
func headOfSize(s string, size, n int) textPart {
	s = textcut.Head(s, n)
	size = max(size, len(s))
	return textPart{Text: strings.ToValidUTF8(s, "\uFFFD"), Size: size, Cut: size - len(s)}
}

// tailExcerpt is the textPart of the last n bytes of s, the end of a text of size
// bytes, cut at a character boundary.
func tailExcerpt(s string, size, n int) textPart {
	s = textcut.Tail(s, n)
	size = max(size, len(s))
	return textPart{Text: strings.ToValidUTF8(s, "\uFFFD"), Size: size, Cut: size - len(s), Tail: true}
}

// sessionDetail is what report.html shows when a session is opened: its row, and what
// its folder holds, each part within its limit.
type sessionDetail struct {
	Row Row `json:"row"`
	// Dir is the session's folder as the report names it, relative to the report.
	Dir string `json:"dir"`
	// Problems are the files of the folder that could not be read.
	Problems   []string            `json:"problems,omitempty"`
	StopReason protocol.StopReason `json:"stop_reason,omitempty"`
	Result     *textPart           `json:"result,omitempty"`
	Structured string              `json:"structured_output,omitempty"`
	Error      *protocol.Error     `json:"error,omitempty"`
	Checks     []detailCheck       `json:"checks,omitempty"`
	Transcript *textPart           `json:"transcript,omitempty"`
	Tools      []detailToolCall    `json:"tools,omitempty"`
	// ToolsOmitted counts the earlier calls left out for the limit.
	ToolsOmitted int `json:"tools_omitted,omitempty"`
	// Patch is changes.patch (worktree workspaces); without one, Edits are the Write and
	// Edit calls that succeeded, and EditsOmitted the ones left out for the limit.
	Patch        *textPart    `json:"patch,omitempty"`
	Edits        []detailEdit `json:"edits,omitempty"`
	EditsOmitted int          `json:"edits_omitted,omitempty"`
}

type detailCheck struct {
	Name       string   `json:"name"`
	Passed     bool     `json:"passed"`
	ExitCode   int      `json:"exit_code"`
	DurationMS int64    `json:"duration_ms"`
	Output     textPart `json:"output"`
}

type detailToolCall struct {
	Name string `json:"name"`
	// Parent is the id of the Task call of a sub-agent's call.
	Parent  string    `json:"parent,omitempty"`
	Input   textPart  `json:"input"`
	Output  *textPart `json:"output,omitempty"`
	IsError bool      `json:"is_error,omitempty"`
}

type detailEdit struct {
	Tool string   `json:"tool"`
	Path string   `json:"path"`
	Text textPart `json:"text"`
}

// readDetail reads what report.html shows of row's session from its folder dir; the
// parts that cannot be read are named in Problems, and the row stands for the result.
func readDetail(row Row, dir, shown string) *sessionDetail {
	row.Failure = row.failure()
	d := &sessionDetail{Row: row, Dir: shown, Error: row.Error}
	problem := func(file string, err error) {
		if errors.Is(err, fs.ErrNotExist) {
			d.Problems = append(d.Problems, file+": not found in "+shown)
			return
		}
		d.Problems = append(d.Problems, fmt.Sprintf("%s: %v", file, err))
	}
	var res protocol.Result
	if err := readJSON(filepath.Join(dir, ResultFile), &res); err != nil {
		problem(ResultFile, err)
	} else {
		d.StopReason, d.Error = res.StopReason, res.Error
		r := headOf(res.Result, reportResultHead)
		d.Result = &r
		if so := bytes.TrimSpace(res.StructuredOutput); len(so) > 0 && string(so) != "null" {
			var pretty bytes.Buffer
			if json.Indent(&pretty, so, "", "  ") != nil {
				pretty.Reset()
				pretty.Write(so)
			}
			d.Structured = headOf(pretty.String(), reportResultHead).Text
		}
		for _, c := range res.Checks {
			d.Checks = append(d.Checks, detailCheck{Name: c.Name, Passed: c.Passed, ExitCode: c.ExitCode,
				DurationMS: c.DurationMS, Output: tailExcerpt(c.Output, len(c.Output), reportCheckTail)})
		}
	}
	if b, size, err := readTailSize(filepath.Join(dir, TranscriptFile), reportTranscriptTail); err != nil {
		problem(TranscriptFile, err)
	} else {
		t := tailExcerpt(string(b), size, reportTranscriptTail)
		d.Transcript = &t
	}
	calls, err := readToolCalls(filepath.Join(dir, EventsFile))
	if err != nil {
		problem(EventsFile, err)
	}
	d.Tools, d.ToolsOmitted = latestCalls(calls, reportToolsBudget)
	if b, size, err := readHead(filepath.Join(dir, PatchFile), reportChangesHead); err == nil {
		p := headOfSize(string(b), size, reportChangesHead)
		d.Patch = &p
	} else if !errors.Is(err, fs.ErrNotExist) {
		problem(PatchFile, err)
	} else {
		d.Edits, d.EditsOmitted = editsOf(calls, reportChangesHead)
	}
	return d
}

// toolCall is one call of events.jsonl with its result, cut to what the report can
// show: a session's events may hold megabytes of tool output.
type toolCall struct {
	detailToolCall
	// change is what a Write or an Edit call changed, or nil.
	change *detailEdit
}

// readToolCalls reads the tool calls of an events.jsonl in order, each with its result;
// the calls read before a bad line are returned with the error.
func readToolCalls(path string) ([]toolCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var calls []toolCall
	byID := map[string]int{}
	er := protocol.NewEventReader(f)
	for er.Next() {
		m := er.Message()
		switch m.Kind {
		case protocol.KindToolCall:
			byID[m.Call.ID] = len(calls)
			c := toolCall{detailToolCall: detailToolCall{Name: m.Call.Name, Parent: m.Parent,
				Input: headOf(prettyJSON(m.Call.Input), reportToolField)}}
			if m.Call.Name == "Write" || m.Call.Name == "Edit" {
				var in struct {
					Path     string `json:"path"`
					FilePath string `json:"file_path"`
					Content  string `json:"content"`
				}
				_ = json.Unmarshal([]byte(m.Call.Input), &in) // a call that does not parse shows no path
				c.change = &detailEdit{Tool: m.Call.Name, Path: cmp.Or(in.Path, in.FilePath), Text: headOf(in.Content, reportChangesHead)}
			}
			calls = append(calls, c)
		case protocol.KindToolResult:
			i, ok := byID[m.Result.ToolUseID]
			if !ok {
				continue
			}
			c := &calls[i]
			out := headOf(m.Result.Content, reportToolField)
			c.Output, c.IsError = &out, m.Result.IsError
			switch {
			case c.change == nil:
			case c.IsError:
				c.change = nil // it changed nothing
			case c.Name == "Edit":
				// Edit's reply holds the change as a unified diff.
				c.change.Text = headOf(m.Result.Content, reportChangesHead)
			}
		default:
			// The report's tool calls need no other kind.
		}
	}
	return calls, er.Err()
}

// latestCalls keeps the latest calls whose inputs and outputs fit in budget, and counts
// the earlier ones left out.
func latestCalls(calls []toolCall, budget int) ([]detailToolCall, int) {
	var kept []detailToolCall
	used := 0
	i := len(calls) - 1
	for ; i >= 0; i-- {
		c := calls[i].detailToolCall
		n := len(c.Input.Text)
		if c.Output != nil {
			n += len(c.Output.Text)
		}
		if used+n > budget && len(kept) > 0 {
			break
		}
		used += n
		kept = append(kept, c)
	}
	slices.Reverse(kept)
	return kept, i + 1
}

// editsOf lists the Write and Edit calls that succeeded, in order, the first ones that
// fit in budget: for Write the content written, for Edit its reply, which holds the
// change as a unified diff.
func editsOf(calls []toolCall, budget int) ([]detailEdit, int) {
	var edits []detailEdit
	used, omitted := 0, 0
	for _, c := range calls {
		if c.change == nil || c.Output == nil {
			continue
		}
		if used >= budget {
			omitted++
			continue
		}
		e := *c.change
		if len(e.Text.Text) > budget-used {
			e.Text = headOfSize(e.Text.Text, e.Text.Size, budget-used)
		}
		used += len(e.Text.Text)
		edits = append(edits, e)
	}
	return edits, omitted
}

// prettyJSON indents a tool call's input; input that is not JSON stays as it is.
func prettyJSON(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return b.String()
}

// readHead returns the first n bytes of a file and its size.
func readHead(path string, n int) ([]byte, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	b := make([]byte, min(int64(n), st.Size()))
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, 0, err
	}
	return b, int(st.Size()), nil
}

// readTailSize returns the last n bytes of a file and its size.
func readTailSize(path string, n int) ([]byte, int, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	b, err := readTail(path, int64(n)+4) // a character cut at the start is dropped
	return b, int(st.Size()), err
}

// packer encodes sessions' details for report.html, reusing its compressors (each
// holds about a megabyte of state); it is safe for concurrent use.
type packer struct {
	files *sink.Files
	zw    sync.Pool // of *gzip.Writer
}

func newPacker(files *sink.Files) *packer {
	return &packer{files: files, zw: sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}}
}

// pack encodes d: JSON masked as a .json file is, gzip, then base64url, whose alphabet
// needs no escaping in HTML.
func (p *packer) pack(d *sessionDetail) (string, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("session %s: %w", d.Row.Key, err)
	}
	// Masked before compression, where no mask could find a secret.
	b = p.files.Mask("detail.json", b)
	var z bytes.Buffer
	zw := p.zw.Get().(*gzip.Writer)
	defer p.zw.Put(zw)
	zw.Reset(&z)
	if _, err := zw.Write(b); err != nil {
		return "", fmt.Errorf("session %s: %w", d.Row.Key, err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("session %s: %w", d.Row.Key, err)
	}
	return base64.RawURLEncoding.EncodeToString(z.Bytes()), nil
}

package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// Store persists a session's conversation window, compaction summary and counters.
type Store interface {
	// Load returns the saved state (empty for a new session).
	Load() (State, error)
	// Append adds turns at the end of the conversation.
	Append(turns []protocol.Turn) error
	// Replace swaps the whole conversation and the summary (after compaction).
	Replace(turns []protocol.Turn, summary string) error
	// SaveStats saves the counters.
	SaveStats(Stats) error
}

// State is a session as saved.
type State struct {
	Turns   []protocol.Turn
	Summary string
	Stats   Stats
}

// The files of a session folder.
const (
	MessagesFile = "messages.jsonl"
	SummaryFile  = "summary.txt"
	StatsFile    = "stats.json"
	EventsFile   = "events.jsonl"
)

// DirStore keeps a session in one folder: messages.jsonl (the exact window sent to the
// model, one Claude-format message per line), summary.txt and stats.json. Appends are
// single writes of whole lines, replacements are atomic renames, so a process killed at
// any point leaves at most a torn last line, which Load ignores.
type DirStore struct {
	Dir string
	// Files writes the folder's files: sink.Files, which masks secrets in all of them
	// and has the one atomic writer of the project. A DirStore without it can Load but
	// not write.
	Files Files
	// NoStats leaves stats.json unwritten: for a folder whose owner records the same
	// counters elsewhere (the runner's result.json) and never resumes from it, one file
	// creation and one rename less per session.
	NoStats bool

	made bool           // Dir is known to exist
	f    io.WriteCloser // messages.jsonl, open for appending once used
}

// Files is what a DirStore writes its files with (sink.Files masks secrets in them).
type Files interface {
	// WriteFile replaces path atomically with data, synced to disk when sync is set.
	WriteFile(path string, data []byte, sync bool) error
	// OpenAppend opens path for appending whole lines, creating it when missing.
	OpenAppend(path string) (io.WriteCloser, error)
}

// errNoFiles is the error of a write to a DirStore without Files.
var errNoFiles = errors.New("dir store: no Files to write with")

// noFiles refuses every write.
type noFiles struct{}

func (noFiles) WriteFile(string, []byte, bool) error      { return errNoFiles }
func (noFiles) OpenAppend(string) (io.WriteCloser, error) { return nil, errNoFiles }

func (d *DirStore) files() Files {
	if d.Files == nil {
		return noFiles{}
	}
	return d.Files
}

var _ Store = (*DirStore)(nil)

// Load reads the folder. A missing folder is a new, empty session. A conversation that
// ends in tool calls without results (the process died while a tool ran) gets error
// results saying so, so the window is valid for the next request.
func (d *DirStore) Load() (State, error) {
	var st State
	data, err := os.ReadFile(filepath.Join(d.Dir, MessagesFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return st, fmt.Errorf("load session: %w", err)
	default:
		st.Turns, err = parseMessages(data)
		if err != nil {
			return st, fmt.Errorf("load session: %s: %w", filepath.Join(d.Dir, MessagesFile), err)
		}
	}
	st.Turns = repairTail(st.Turns)
	if b, err := os.ReadFile(filepath.Join(d.Dir, SummaryFile)); err == nil {
		st.Summary = string(b)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return st, fmt.Errorf("load session: %w", err)
	}
	if b, err := os.ReadFile(filepath.Join(d.Dir, StatsFile)); err == nil {
		if err := json.Unmarshal(bytes.TrimSpace(b), &st.Stats); err != nil {
			return st, fmt.Errorf("load session: %s: %w", StatsFile, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return st, fmt.Errorf("load session: %w", err)
	}
	return st, nil
}

// parseMessages reads messages.jsonl; a torn last line is skipped, a bad line before it
// is an error naming its number.
func parseMessages(data []byte) ([]protocol.Turn, error) {
	var turns []protocol.Turn
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	line := 0
	complete := len(data) > 0 && data[len(data)-1] == '\n'
	lines := bytes.Count(data, []byte("\n"))
	if !complete {
		lines++
	}
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var t protocol.Turn
		if err := json.Unmarshal(b, &t); err != nil {
			if line == lines {
				break // torn last line
			}
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		turns = append(turns, t)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return turns, nil
}

// InterruptedResult is the tool result recorded for a tool that was running when the
// session stopped.
const InterruptedResult = "interrupted: the session stopped before this tool returned; its effects are unknown"

// repairTail makes a loaded window valid: tool uses of the last assistant turn that
// have no result get an error result.
func repairTail(turns []protocol.Turn) []protocol.Turn {
	n := len(turns)
	if n == 0 || turns[n-1].Role != protocol.RoleAssistant {
		return turns
	}
	var results []protocol.Block
	for _, b := range turns[n-1].ToolUses() {
		results = append(results, protocol.Block{Type: protocol.BlockToolResult, ToolUseID: b.ID,
			Content: InterruptedResult, IsError: true})
	}
	if len(results) == 0 {
		return turns
	}
	return append(turns, protocol.Turn{Role: protocol.RoleUser, Blocks: results})
}

// Append writes turns as lines in one write call.
func (d *DirStore) Append(turns []protocol.Turn) error {
	if len(turns) == 0 {
		return nil
	}
	buf, err := marshalTurns(turns)
	if err != nil {
		return err
	}
	if d.f == nil {
		if !d.made {
			if err := os.MkdirAll(d.Dir, 0o755); err != nil {
				return fmt.Errorf("append messages: %w", err)
			}
			d.made = true
		}
		f, err := d.files().OpenAppend(filepath.Join(d.Dir, MessagesFile))
		if err != nil {
			return fmt.Errorf("append messages: %w", err)
		}
		d.f = f
	}
	if _, err := d.f.Write(buf); err != nil {
		return fmt.Errorf("append messages: %w", err)
	}
	return nil
}

// Close releases the open messages file; the store opens it again when needed.
func (d *DirStore) Close() error {
	if d.f == nil {
		return nil
	}
	err := d.f.Close()
	d.f = nil
	if err != nil {
		return fmt.Errorf("close messages: %w", err)
	}
	return nil
}

func marshalTurns(turns []protocol.Turn) ([]byte, error) {
	var buf bytes.Buffer
	for _, t := range turns {
		b, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("marshal messages: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// Replace atomically rewrites messages.jsonl and summary.txt.
func (d *DirStore) Replace(turns []protocol.Turn, summary string) error {
	buf, err := marshalTurns(turns)
	if err != nil {
		return err
	}
	if err := d.Close(); err != nil { // the file is about to be replaced
		return err
	}
	if err := d.files().WriteFile(filepath.Join(d.Dir, SummaryFile), []byte(summary), true); err != nil {
		return err
	}
	return d.files().WriteFile(filepath.Join(d.Dir, MessagesFile), buf, true)
}

// SaveStats atomically writes stats.json as one line, unless NoStats is set. It is not
// synced to disk: the counters are rebuilt from what is, and a sync per session costs
// more than they are worth.
func (d *DirStore) SaveStats(s Stats) error {
	if d.NoStats {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("save stats: %w", err)
	}
	return d.files().WriteFile(filepath.Join(d.Dir, StatsFile), append(b, '\n'), false)
}

// persistAppend saves s.conv[first:].
func (s *Session) persistAppend(first int) error {
	if s.deps.Store == nil || first >= len(s.conv) {
		return nil
	}
	return s.deps.Store.Append(s.conv[first:])
}

// persistAll rewrites the saved window and summary.
func (s *Session) persistAll() error {
	if s.deps.Store == nil {
		return nil
	}
	return s.deps.Store.Replace(s.conv, s.summary)
}

// ProjectKey turns a directory into the seed's project key: the path without its
// leading slash, every run of characters outside [A-Za-z0-9._-] (slashes included)
// as one "-", trimmed, with a leading "-".
func ProjectKey(dir string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.TrimPrefix(dir, "/") {
		ok := r < 128 && (r == '.' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		if ok {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return "-" + strings.Trim(b.String(), "-")
}

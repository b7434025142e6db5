package agent

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/agentrun/agentrun/textcut"
)

// ProjectStore is the folder of one project's exec sessions,
// $AGENTRUN_HOME/projects/<ProjectKey>/<session id>/, each the Dir of a DirStore.
type ProjectStore struct {
	Root string
	// Files writes the sessions' files (sink.Files, which masks the API keys).
	Files Files
}

// ErrSessionName is the error of a session name that is not a folder name.
var ErrSessionName = errors.New("use letters, digits, '.', '_' and '-'")

// ErrNoSession is the error of forking a session the project does not have.
var ErrNoSession = errors.New("no such session in this folder")

type storedSession struct {
	id       string
	modified time.Time
}

// validName is what a session name must be: a folder name, not a path.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// sessions lists the project's sessions, newest first (by the time of their last
// event, else of their folder).
func (s ProjectStore) sessions() ([]storedSession, error) {
	entries, err := os.ReadDir(s.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []storedSession
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(s.Root, e.Name())
		st, err := os.Stat(filepath.Join(dir, EventsFile))
		if err != nil {
			st, err = os.Stat(dir)
		}
		if err != nil {
			continue
		}
		out = append(out, storedSession{id: e.Name(), modified: st.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].modified.Equal(out[j].modified) {
			return out[i].modified.After(out[j].modified)
		}
		return out[i].id > out[j].id
	})
	return out, nil
}

// List prints the sessions as a table: name, last modified, summary preview.
func (s ProjectStore) List(w io.Writer) error {
	all, err := s.sessions()
	if err != nil {
		return err
	}
	if len(all) == 0 {
		_, _ = fmt.Fprintln(w, "No sessions found.")
		return nil
	}
	_, _ = fmt.Fprintf(w, "%-40s %-16s %s\n", "NAME", "MODIFIED", "PREVIEW")
	for _, ss := range all {
		_, _ = fmt.Fprintf(w, "%-40s %-16s %s\n", ss.id, ss.modified.Local().Format("2006-01-02 15:04"), s.preview(ss.id))
	}
	return nil
}

// preview is the first non-blank line of the session's summary, else of its first
// prompt.
func (s ProjectStore) preview(id string) string {
	line := firstLine(filepath.Join(s.Root, id, SummaryFile), nil)
	if line == "" {
		st, err := (&DirStore{Dir: filepath.Join(s.Root, id)}).Load()
		if err == nil && len(st.Turns) > 0 && st.Turns[0].IsUserText() {
			line = strings.TrimSpace(strings.SplitN(st.Turns[0].Blocks[0].Text, "\n", 2)[0])
		}
	}
	return textcut.ClipRunes(line, 60, "...")
}

// firstLine is the first line of the file at path that, trimmed, is not empty and
// not skipped; "" when there is none or the file cannot be read.
func firstLine(path string, skip func(line string) bool) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" && (skip == nil || !skip(t)) {
			return t
		}
	}
	return ""
}

// Choose returns the id of the session to run: a new one, the named one, or the
// newest; with fork, a new session seeded with a copy of the chosen one.
func (s ProjectStore) Choose(name string, cont, fork bool, now time.Time) (string, error) {
	var source string
	switch {
	case name != "":
		if !validName.MatchString(name) {
			return "", fmt.Errorf("session %q: %w", name, ErrSessionName)
		}
		source = name
	case cont:
		all, err := s.sessions()
		if err != nil {
			return "", err
		}
		if len(all) == 0 {
			if fork {
				return "", fmt.Errorf("fork the newest session: %w", ErrNoSession)
			}
			return NewSessionID(now), nil
		}
		source = all[0].id
	default:
		return NewSessionID(now), nil
	}
	if !fork {
		return source, nil
	}
	src := filepath.Join(s.Root, source)
	if _, err := os.Stat(src); err != nil {
		return "", fmt.Errorf("fork session %q: %w", source, ErrNoSession)
	}
	id := NewSessionID(now)
	for _, f := range []string{MessagesFile, SummaryFile, StatsFile} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("fork: %w", err)
		}
		if err := s.Files.WriteFile(filepath.Join(s.Root, id, f), b, true); err != nil {
			return "", fmt.Errorf("fork: %w", err)
		}
	}
	return id, nil
}

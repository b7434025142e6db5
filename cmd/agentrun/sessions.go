package main

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

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/textcut"
)

// sessionStore is the folder of one project's exec sessions:
// $AGENTRUN_HOME/projects/<project key>/<session id>/.
type sessionStore struct {
	root string
	// files writes the sessions' files, masking the API keys.
	files *sink.Files
}

type storedSession struct {
	id       string
	modified time.Time
}

// validName is what --session accepts: a folder name, not a path.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// sessions lists the project's sessions, newest first (by the time of their last
// event, else of their folder).
func (s sessionStore) sessions() ([]storedSession, error) {
	entries, err := os.ReadDir(s.root)
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
		dir := filepath.Join(s.root, e.Name())
		st, err := os.Stat(filepath.Join(dir, agent.EventsFile))
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

// list prints the sessions as a table: name, last modified, summary preview.
func (s sessionStore) list(w io.Writer) error {
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
func (s sessionStore) preview(id string) string {
	line := firstLine(filepath.Join(s.root, id, agent.SummaryFile))
	if line == "" {
		st, err := (&agent.DirStore{Dir: filepath.Join(s.root, id)}).Load()
		if err == nil && len(st.Turns) > 0 && st.Turns[0].IsUserText() {
			line = strings.TrimSpace(strings.SplitN(st.Turns[0].Blocks[0].Text, "\n", 2)[0])
		}
	}
	return textcut.ClipRunes(line, 60, "...")
}

func firstLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			return t
		}
	}
	return ""
}

// choose returns the id of the session to run: a new one, the named one, or the
// newest; with fork, a new session seeded with a copy of the chosen one.
func (s sessionStore) choose(name string, cont, fork bool, now time.Time) (string, error) {
	var source string
	switch {
	case name != "":
		if !validName.MatchString(name) {
			return "", usagef("exec: --session %q: use letters, digits, '.', '_' and '-'", name)
		}
		source = name
	case cont:
		all, err := s.sessions()
		if err != nil {
			return "", err
		}
		if len(all) == 0 {
			if fork {
				return "", usagef("exec: --continue --fork: this folder has no session yet")
			}
			return agent.NewSessionID(now), nil
		}
		source = all[0].id
	default:
		return agent.NewSessionID(now), nil
	}
	if !fork {
		return source, nil
	}
	src := filepath.Join(s.root, source)
	if _, err := os.Stat(src); err != nil {
		return "", usagef("exec: --fork: no session %q in this folder", source)
	}
	id := agent.NewSessionID(now)
	for _, f := range []string{agent.MessagesFile, agent.SummaryFile, agent.StatsFile} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("fork: %w", err)
		}
		if err := s.files.WriteFile(filepath.Join(s.root, id, f), b, true); err != nil {
			return "", fmt.Errorf("fork: %w", err)
		}
	}
	return id, nil
}

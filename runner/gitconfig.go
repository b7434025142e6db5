package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// configScan reads one config file and the files it includes.
type configScan struct {
	git  gitBin
	home string
	// included are the included files that hold credentials; holds says of each file
	// read so far whether it does (false while it is read, against an include cycle);
	// entries are the entries git listed of each file it was asked to.
	included []string
	holds    map[string]bool
	entries  map[string][]configEntry
}

// newConfigScan is a scan of config files whose ~ is home.
func newConfigScan(g gitBin, home string) *configScan {
	return &configScan{git: g, home: home, holds: map[string]bool{}, entries: map[string][]configEntry{}}
}

// maxIncludeDepth is git's own limit on nested includes.
const maxIncludeDepth = 10

// file returns the content of the config file f and its credentials, with the includes
// of files that hold credentials among them.
func (s *configScan) file(ctx context.Context, f string) ([]byte, []configEntry, error) {
	b, creds, err := s.read(ctx, f)
	if err == nil {
		s.holds[f] = len(creds) > 0
	}
	return b, creds, err
}

// includes says whether the included file f holds credentials, or why it could not be
// read. Past maxIncludeDepth² files, one more is taken to hold them.
func (s *configScan) includes(ctx context.Context, f string) (bool, error) {
	if holds, seen := s.holds[f]; seen {
		return holds, nil
	}
	if len(s.holds) > maxIncludeDepth*maxIncludeDepth {
		return true, nil
	}
	s.holds[f] = false
	_, creds, err := s.file(ctx, f)
	return len(creds) > 0, err
}

// read is file without the record of what it found.
func (s *configScan) read(ctx context.Context, f string) ([]byte, []configEntry, error) {
	b, err := os.ReadFile(f)
	if err != nil {
		return nil, nil, err
	}
	if !mayHoldCredentials(b) {
		return b, nil, nil
	}
	entries, err := s.git.listConfig(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	s.entries[f] = entries
	var creds []configEntry
	for _, e := range entries {
		if e.credential() {
			creds = append(creds, e)
			continue
		}
		target, ok := e.include(f, s.home)
		if !ok {
			continue
		}
		holds, err := s.includes(ctx, target)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// git skips an include that is not there
		case err != nil || holds:
			// An include the runner cannot read is hidden as well: the tools could
			// perhaps read what the runner cannot.
			s.included = append(s.included, target)
			s.holds[target] = true
			creds = append(creds, e)
		}
	}
	return b, creds, nil
}

// mayHoldCredentials is the quick look that spares a git process for the configs
// that hold nothing of the kind: no extra header, no URL with a user, no include, no
// credential section.
func mayHoldCredentials(b []byte) bool {
	low := bytes.ToLower(b)
	return bytes.Contains(low, []byte("extraheader")) || bytes.Contains(low, []byte("[include")) ||
		bytes.Contains(low, []byte("[credential")) || userURL.Match(b)
}

// userURL is a URL with user information ("https://user:token@host").
var userURL = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/\s"@]*@`)

// configEntry is one entry of a config file as git lists it: the key with its section
// and name in lower case, the subsection as written.
type configEntry struct {
	key, value string
	valued     bool // false for a bare key, which means true
}

// listConfig lists the entries of the config file f, as git reads them (no include
// followed).
func (g gitBin) listConfig(ctx context.Context, f string) ([]configEntry, error) {
	out, err := g.quiet(ctx, "config", "--file", f, "--list", "--null")
	if err != nil {
		return nil, err
	}
	return parseConfigList(out), nil
}

// parseConfigList reads git config --list --null: NUL-terminated entries, each the key
// and, after a newline, its value.
func parseConfigList(out []byte) []configEntry {
	var entries []configEntry
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		key, value, valued := bytes.Cut(rec, []byte{'\n'})
		entries = append(entries, configEntry{key: string(key), value: string(value), valued: valued})
	}
	return entries
}

// parts splits the entry's key into its section, subsection and name.
func (e configEntry) parts() (section, sub, name string) {
	first, last := strings.IndexByte(e.key, '.'), strings.LastIndexByte(e.key, '.')
	if first < 0 {
		return e.key, "", ""
	}
	if last > first {
		sub = e.key[first+1 : last]
	}
	return e.key[:first], sub, e.key[last+1:]
}

// urlNames are the names whose values are URLs.
var urlNames = map[string]bool{"url": true, "pushurl": true, "insteadof": true, "pushinsteadof": true, "proxy": true}

// credential says whether the entry gives a credential: an extra HTTP header (the form
// actions/checkout writes its token in), a credential helper that is a shell command of
// the config's own (`!f() { echo password=TOKEN; }; f`, as CI writes one), a URL with
// a user's password or token, or a subsection named by one ([url "https://TOKEN@host/"]
// with its insteadOf).
func (e configEntry) credential() bool {
	section, sub, name := e.parts()
	if section == "http" && name == "extraheader" {
		return true
	}
	if section == "credential" && name == "helper" && strings.HasPrefix(strings.TrimSpace(e.value), "!") {
		return true
	}
	if _, ok := withoutUser(sub); ok {
		return true
	}
	_, ok := withoutUser(e.value)
	return ok && urlNames[name]
}

// safeKey is the entry's key with its subsection's user information taken out, to be
// named in an error.
func (e configEntry) safeKey() string {
	section, sub, name := e.parts()
	if clean, ok := withoutUser(sub); ok {
		return section + "." + clean + "." + name
	}
	return e.key
}

// include returns the file an include of config file f names; home is what ~ means.
func (e configEntry) include(f, home string) (string, bool) {
	section, _, name := e.parts()
	if (section != "include" && section != "includeif") || name != "path" || e.value == "" {
		return "", false
	}
	p := e.value
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		p = filepath.Join(home, rest)
	} else if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(f), p)
	}
	return filepath.Clean(p), true
}

// withoutUser returns the URL s without its user information, and whether it had one.
// The user's name goes too, not just the password: a forge takes a token as the name
// alone ("https://TOKEN@github.com/"). Of an ssh URL, whose user is an account's
// name, only a password goes.
func withoutUser(s string) (string, bool) {
	loc := userURL.FindStringIndex(s)
	if loc == nil || loc[0] != 0 {
		return s, false
	}
	scheme, rest, _ := strings.Cut(s, "://")
	at := loc[1] - 1 - len(scheme) - len("://")
	user := rest[:at]
	if l := strings.ToLower(scheme); l == "ssh" || l == "git+ssh" || l == "ssh+git" {
		name, _, hasPass := strings.Cut(user, ":")
		if !hasPass {
			return s, false
		}
		return scheme + "://" + name + rest[at:], true
	}
	return scheme + "://" + rest[at+1:], true
}

// cleanConfig returns config content b, whose entries git listed as all, without the
// entries creds, written by git itself: an entry goes, a URL loses its user, and a
// section named by a URL with a user is written again under the URL without.
func (g gitBin) cleanConfig(ctx context.Context, b []byte, all, creds []configEntry) ([]byte, error) {
	return editConfig(b, func(path string) error { return g.takeOut(ctx, path, all, creds) })
}

// takeOut takes the entries creds out of the config file at path, whose entries git
// listed as all (cleanConfig).
func (g gitBin) takeOut(ctx context.Context, path string, all, creds []configEntry) error {
	file := []string{"config", "--file", path}
	renamed := map[string]bool{}
	for _, e := range creds {
		section, sub, _ := e.parts()
		clean, ok := withoutUser(sub)
		if !ok || renamed[section+"."+sub] {
			continue
		}
		renamed[section+"."+sub] = true
		if _, err := g.quiet(ctx, append(file, "--remove-section", section+"."+sub)...); err != nil {
			return err
		}
		for _, moved := range all {
			s, ms, name := moved.parts()
			if s != section || ms != sub {
				continue
			}
			moved.key = section + "." + clean + "." + name
			if moved.credential() {
				continue // a header or a URL with a user of its own: not written again
			}
			if _, err := g.quiet(ctx, append(file, "--add", moved.key, moved.value)...); err != nil {
				return err
			}
		}
	}
	done := map[configEntry]bool{}
	for _, e := range creds {
		section, sub, name := e.parts()
		if renamed[section+"."+sub] || done[e] {
			continue
		}
		done[e] = true
		args := append(file, "--fixed-value", "--unset-all", e.key, e.value)
		if clean, ok := withoutUser(e.value); ok && urlNames[name] {
			args = append(file, "--fixed-value", "--replace-all", e.key, clean, e.value)
		}
		if _, err := g.quiet(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// editConfig writes config content b to a temporary file of its own, has edit change
// it there (with git config --file), and returns what the file holds then.
func editConfig(b []byte, edit func(path string) error) ([]byte, error) {
	f, err := os.CreateTemp("", "agentrun-gitconfig-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if err := edit(f.Name()); err != nil {
		return nil, err
	}
	return os.ReadFile(f.Name())
}

// unsetKey takes every value of key out of the config file at path; a key the file
// does not hold is no error (git config's exit status 5). The error names neither the
// key nor the file's content: a key the tools chose may hold a secret of the session's.
func (g gitBin) unsetKey(ctx context.Context, path, key string) error {
	err := g.command(ctx, "config", "--file", path, "--unset-all", key).Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() == 5 {
			return nil
		}
		return fmt.Errorf("git config --unset-all failed (exit status %d)", exit.ExitCode())
	}
	return err
}

// quiet runs a git command whose arguments and output may hold credentials: its error
// says only how git ended.
func (g gitBin) quiet(ctx context.Context, args ...string) ([]byte, error) {
	out, err := g.command(ctx, args...).Output()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return nil, fmt.Errorf("git %s failed (exit status %d)", args[0], exit.ExitCode())
	case err != nil:
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}

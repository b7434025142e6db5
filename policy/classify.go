package policy

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrun/agentrun/pathname"
)

// maxClassifyDepth bounds nested classification ($(…) in bash -c in eval …).
const maxClassifyDepth = 8

// classifier scans one command line. It tracks the directory that cd moves to, so
// that later relative paths are scoped where they really point.
type classifier struct {
	dirs Dirs
	cwd  string // "" is the workspace; unknownDir after an unknowable cd
	// cwdDotDot says cwd was reached through "..", so relative paths from it are
	// not trusted as direct paths into shared scratch directories.
	cwdDotDot bool
	depth     int
}

// classifyCommand returns what a Bash command requires under the seed's rules
// (inventory §5.1), with the causes. A command that matches nothing needs
// workspace read, since it runs in the workspace.
func classifyCommand(command string, d Dirs) verdict {
	c := &classifier{dirs: d}
	v := c.classify(command)
	if v.need == 0 {
		v.add(WorkspaceRead, "the command runs in the workspace")
	}
	return v
}

// classify scans a command line.
func (c *classifier) classify(command string) verdict {
	var v verdict
	if c.depth > maxClassifyDepth {
		v.add(WorkspaceExecute, "deeply nested commands")
		return v
	}
	lower := strings.ToLower(command)
	if strings.Contains(lower, "/dev/tcp/") || strings.Contains(lower, "/dev/udp/") {
		v.add(NetworkRead|NetworkWrite, "/dev/tcp opens a network connection")
	}
	for _, scheme := range []string{"http://", "https://", "ftp://"} {
		if strings.Contains(lower, scheme) {
			v.add(NetworkRead, "the command names a "+strings.TrimSuffix(scheme, "://")+" URL")
		}
	}
	if isForkBomb(command) {
		v.add(SystemExecute, "a fork bomb exhausts the system")
	}
	type dir struct {
		cwd    string
		dotdot bool
	}
	var outer []dir // the directories to return to when subshells end
	for _, pl := range parse(lex(command)) {
		switch pl.mark {
		case "(":
			outer = append(outer, dir{c.cwd, c.cwdDotDot})
			continue
		case ")":
			if n := len(outer); n > 0 {
				c.cwd, c.cwdDotDot = outer[n-1].cwd, outer[n-1].dotdot
				outer = outer[:n-1]
			}
			continue
		}
		downloaded := false
		for _, sc := range pl.cmds {
			var sv verdict
			c.simple(&sv, sc, downloaded)
			downloaded = downloaded || sv.need&NetworkRead != 0
			v.merge(sv)
		}
	}
	return v
}

// nested classifies a command inside this one (a substitution, bash -c, eval) and
// adds its needs to v. It reports whether that command downloads.
func (c *classifier) nested(v *verdict, command string) bool {
	if strings.TrimSpace(command) == "" || command == subMark {
		return false
	}
	inner := &classifier{dirs: c.dirs, cwd: c.cwd, cwdDotDot: c.cwdDotDot, depth: c.depth + 1}
	nv := inner.classify(command)
	v.merge(nv)
	return nv.need&NetworkRead != 0
}

// simple classifies one simple command. stdinDownload says an earlier stage of the
// pipeline downloads, so the command's stdin may be a downloaded script.
func (c *classifier) simple(v *verdict, sc simple, stdinDownload bool) {
	for _, r := range sc.redirs {
		c.redirect(v, r)
	}
	subDownload := false
	for _, w := range sc.words {
		for _, s := range w.subs {
			subDownload = c.nested(v, s) || subDownload
		}
	}
	if sc.funcDef {
		v.add(WorkspaceExecute, "a shell function definition")
	}
	words := sc.words
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	x := &cmdCtx{c: c, v: v, sc: sc, stdinDownload: stdinDownload, subDownload: subDownload}
	x.run(words)
}

// redirect classifies one redirection.
func (c *classifier) redirect(v *verdict, r redirect) {
	for _, s := range r.target.subs {
		c.nested(v, s)
	}
	switch op := r.tok.text; op {
	case "<<", "<<-":
		if !r.tok.bodyQuoted {
			for _, s := range extractSubs(r.tok.body) {
				c.nested(v, s)
			}
		}
	case "<<<":
	default:
		if !r.hasTarget {
			return
		}
		t := r.target.text
		if (op == ">&" || op == "<&") && (isDigits(t) || t == "-") {
			return
		}
		perm := WorkspaceWrite
		switch op {
		case "<":
			perm = WorkspaceRead
		case "<>":
			perm = WorkspaceRead | WorkspaceWrite
		}
		c.path(v, r.target, perm)
	}
}

// path scopes a word that names a file, with perm given as workspace bits.
func (c *classifier) path(v *verdict, w token, perm Access) {
	p, ok := pathText(w.text)
	if !ok || slices.Contains(shellStreams, p) {
		return
	}
	relative := !filepath.IsAbs(p) && !strings.HasPrefix(p, "~")
	sc, why := scopePath(c.dirs, p, c.cwd, c.cwdDotDot && relative)
	v.add(sc.access(perm), why)
}

// pathText returns the part of a word that can name a file: URLs (other than
// file://), remote specs such as host:path, sentences, and words that start with
// an unknown expansion name nothing. An expansion later in the word cuts it at the
// last '/' before it.
func pathText(t string) (string, bool) {
	if t == "" || t == "-" || strings.ContainsAny(t, " \t\n") {
		return "", false
	}
	if i := strings.Index(t, "://"); i > 0 {
		if strings.EqualFold(t[:i], "file") {
			return t[i+3:], true
		}
		return "", false
	}
	if i := strings.IndexByte(t, ':'); i >= 0 && !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "~") && !strings.HasPrefix(t, ".") {
		if j := strings.IndexByte(t, '/'); j < 0 || i < j {
			return "", false
		}
	}
	if i := strings.IndexAny(t, "$"+subMark); i >= 0 {
		t = t[:i]
		j := strings.LastIndexByte(t, '/')
		if j < 0 {
			return "", false
		}
		t = t[:j+1]
	}
	return t, true
}

// cd moves the tracked directory.
func (c *classifier) cd(args []token) {
	if len(args) == 0 {
		c.cwdDotDot = false
		c.cwd = c.dirs.Home
		if c.cwd == "" {
			c.cwd = unknownDir
		}
		return
	}
	t := args[0].text
	c.cwdDotDot = pathname.HasDotDot(t) || c.cwdDotDot && !filepath.IsAbs(t) && !strings.HasPrefix(t, "~")
	if t == "-" || strings.ContainsAny(t, "$"+subMark+"*?[{") {
		c.cwd = unknownDir
		return
	}
	switch {
	case t == "~" || strings.HasPrefix(t, "~/"):
		if c.dirs.Home == "" {
			c.cwd = unknownDir
			return
		}
		c.cwd = filepath.Join(c.dirs.Home, t[1:])
	case strings.HasPrefix(t, "~"):
		c.cwd = unknownDir
	case filepath.IsAbs(t):
		c.cwd = filepath.Clean(t)
	case c.cwd == unknownDir:
	default:
		base := c.cwd
		if base == "" {
			base = c.dirs.Workspace
		}
		if base == "" {
			c.cwd = unknownDir
			return
		}
		c.cwd = filepath.Join(base, t)
		if c.cwd == c.dirs.Workspace {
			c.cwd = ""
		}
	}
}

// isAssignment reports whether a word is a NAME=value variable assignment.
func isAssignment(w token) bool {
	name, _, ok := strings.Cut(w.text, "=")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return false
		}
	}
	return true
}

// isForkBomb spots a function that calls itself at least twice with a pipe or a
// background job, such as :(){ :|:& };:.
func isForkBomb(s string) bool {
	compact := strings.Join(strings.Fields(s), "")
	for i := 0; i < len(compact); {
		j := strings.Index(compact[i:], "(){")
		if j < 0 {
			return false
		}
		j += i
		k := j
		for k > 0 && isFuncNameByte(compact[k-1]) {
			k--
		}
		name, body := compact[k:j], compact[j+3:]
		if e := strings.IndexByte(body, '}'); e >= 0 {
			body = body[:e]
		}
		if name != "" && countToken(body, name) >= 2 && strings.ContainsAny(body, "|&") {
			return true
		}
		i = j + 3
	}
	return false
}

func isFuncNameByte(c byte) bool { return isNameByte(c) || c == ':' || c == '.' || c == '-' }

// countToken counts the occurrences of name in s that are not part of a longer name.
func countToken(s, name string) int {
	n := 0
	for i := 0; i+len(name) <= len(s); {
		j := strings.Index(s[i:], name)
		if j < 0 {
			break
		}
		j += i
		end := j + len(name)
		if (j == 0 || !isFuncNameByte(s[j-1])) && (end == len(s) || !isFuncNameByte(s[end])) {
			n++
		}
		i = j + 1
	}
	return n
}

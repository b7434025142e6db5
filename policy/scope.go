package policy

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrun/agentrun/pathname"
)

// scope is where a path lies, as the policy sees it.
type scope uint8

const (
	scopeNone      scope = iota // /tmp, /dev/null and friends: no bits needed
	scopeWorkspace              // inside the workspace
	scopeNetwork                // /dev/tcp and /dev/udp sockets
	scopeExternal               // anywhere else the user can reach: home, other trees
	scopeSystem                 // system directories and credentials
)

// access moves perm, given as workspace bits, to the scope's digit.
func (s scope) access(perm Access) Access {
	switch s {
	case scopeWorkspace:
		return perm
	case scopeNetwork:
		return perm << 3
	case scopeExternal:
		return perm << 6
	case scopeSystem:
		return perm << 9
	case scopeNone:
	}
	return 0 // scopeNone needs no bits
}

// unknownDir is a cwd for relative paths after a cd whose target cannot be known.
const unknownDir = "\x00unknown"

// systemDirs are the top-level directories that belong to the operating system.
var systemDirs = []string{
	"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt", "proc", "root",
	"run", "sbin", "snap", "srv", "sys", "usr", "var", "private", "Library", "System",
	"Applications", "Volumes", "cores",
}

// tempDirs are shared scratch directories that need no bits (for direct paths only).
// /dev/shm is one as /tmp is: at level strict both are the session's private scratch
// space, at landlock both out of reach but for the session's TMPDIR.
var tempDirs = []string{"/tmp", "/var/tmp", "/private/tmp", "/dev/shm"}

// harmlessDevices are device files every command and file tool may use. /dev/stdout,
// /dev/fd/N and the like are not among them: for a file tool they would be agentrun's
// own open files (its output, its protocol pipe).
var harmlessDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// shellStreams are a command's own standard streams, which in a command name the
// pipes and /dev/null that the command was given: they need no bits there.
var shellStreams = []string{"/dev/stdin", "/dev/stdout", "/dev/stderr"}

// sensitiveDirs are directories that hold credentials wherever they appear.
var sensitiveDirs = []string{".ssh", ".gnupg", ".aws", ".docker", ".kube", ".azure", ".password-store"}

// sensitiveConfigDirs are the credential-holding directories under ~/.config.
var sensitiveConfigDirs = []string{"gcloud", "gh", "hub"}

// sensitiveFiles are file names that hold credentials.
var sensitiveFiles = []string{
	".netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass", ".htpasswd", ".vault-token",
	".env", "authorized_keys", "known_hosts",
}

// sensitiveExts are extensions of key and certificate stores.
var sensitiveExts = []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".kdbx", ".env"}

// sensitiveWords, as a word of a data file's name, mark it as holding credentials.
var sensitiveWords = []string{"token", "tokens", "secret", "secrets", "credential", "credentials", "password", "passwords", "apikey"}

// dataExts are the extensions (and "" for dot files) of files whose name words count.
// Source files such as token.go are code, not credentials.
var dataExts = []string{"", ".txt", ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".config", ".properties", ".xml", ".csv", ".dat", ".db", ".secret", ".token"}

// envTemplates are .env variants that hold no secrets by convention.
var envTemplates = []string{".example", ".sample", ".template", ".dist", ".defaults"}

// sensitiveSamples are names that a glob in a path is tested against: a pattern such
// as "~/.ss*" that can expand to a credential store counts as one.
var sensitiveSamples = []string{
	".ssh", ".gnupg", ".aws", ".docker", ".kube", ".azure", ".netrc", ".git-credentials",
	".npmrc", ".pypirc", ".env", ".env.local", "id_rsa", "id_ed25519", "id_ecdsa", "server.pem",
	"server.key", "token.txt", "secrets.json", "credentials", "password.txt",
}

// isSensitiveName reports whether a file or directory name holds credentials.
func isSensitiveName(name string) bool {
	lower := strings.ToLower(name)
	if slices.Contains(sensitiveDirs, lower) || slices.Contains(sensitiveFiles, lower) {
		return true
	}
	for _, k := range []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"} {
		if strings.HasPrefix(lower, k) {
			return true
		}
	}
	if strings.HasPrefix(lower, ".env.") {
		return !slices.Contains(envTemplates, lower[len(".env"):])
	}
	ext := filepath.Ext(lower)
	if slices.Contains(sensitiveExts, ext) {
		return true
	}
	if !strings.Contains(lower, ".") {
		return false // a bare word such as "token" is not taken for a file name
	}
	if ext == lower {
		ext = "" // a dot file such as ".token"
	}
	if !slices.Contains(dataExts, ext) {
		return false
	}
	for _, w := range strings.FieldsFunc(lower, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	}) {
		if slices.Contains(sensitiveWords, w) {
			return true
		}
	}
	return false
}

// isSensitivePath reports whether any element of a path names a credential store.
// Elements that are glob patterns count when they can match such a name.
func isSensitivePath(p string) bool {
	parts := pathname.Elements(p)
	for i, c := range parts {
		if c == "" || c == "." || c == ".." {
			continue
		}
		if c == ".config" && i+1 < len(parts) && slices.Contains(sensitiveConfigDirs, strings.ToLower(parts[i+1])) {
			return true
		}
		if strings.ContainsAny(c, "*?[{") {
			if globMaySensitive(c) {
				return true
			}
			continue
		}
		if isSensitiveName(c) {
			return true
		}
	}
	return false
}

// globMaySensitive reports whether a shell glob element with at least one literal
// character can expand to a credential name. A bare "*" does not count: it matches
// no dot files in the shell, and treating it as a secret would block "rm *".
func globMaySensitive(elem string) bool {
	if strings.Trim(elem, "*?") == "" {
		return false
	}
	seg, err := pathname.CompileSegment(elem)
	if err != nil {
		return false
	}
	for _, s := range sensitiveSamples {
		if strings.HasPrefix(s, ".") && !strings.HasPrefix(elem, ".") {
			continue // the shell's * and ? do not match a leading dot
		}
		if seg.Match(s) {
			return true
		}
	}
	return false
}

func isSystemPath(p string) bool {
	if p == "/" {
		return true
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return strings.HasPrefix(p, "/") && slices.Contains(systemDirs, first)
}

func isTempPath(p string) bool {
	for _, d := range tempDirs {
		if pathname.Within(d, p) {
			return true
		}
	}
	return false
}

// onlyTempRootLinked reports whether the only link on the way from abs to real is a
// scratch directory itself (such as macOS's /tmp -> /private/tmp).
func onlyTempRootLinked(abs, real string) bool {
	for _, d := range tempDirs {
		if pathname.Within(d, abs) {
			return real == pathname.Real(d)+strings.TrimPrefix(abs, d)
		}
	}
	return false
}

func isHarmlessDevice(p string) bool { return slices.Contains(harmlessDevices, p) }

// literalPrefix cuts a path at its first glob character, keeping the directories
// before it: only they name a known location.
func literalPrefix(p string) string {
	i := strings.IndexAny(p, "*?[{")
	if i < 0 {
		return p
	}
	p = p[:i]
	if j := strings.LastIndexByte(p, '/'); j >= 0 {
		return p[:j+1]
	}
	return ""
}

// scopePath says where a path (a tool argument or a word of a command) lies and why.
// Relative paths resolve against cwd, or the workspace when cwd is "". "~" is the
// home directory. Symbolic links in the existing part of the path are followed.
// indirect says the path was reached through ".." earlier (a cd ..), so shared
// scratch directories are not trusted for it.
func scopePath(d Dirs, raw, cwd string, indirect bool) (scope, string) {
	if isSensitivePath(raw) {
		return scopeSystem, raw + " may hold credentials"
	}
	p := literalPrefix(raw)
	if strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/") {
		return scopeNetwork, raw + " is a network socket"
	}
	ws, home := d.Workspace, d.Home
	var abs string
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return scopeExternal, raw + " is in the home directory"
		}
		abs = filepath.Join(home, p[1:])
	case strings.HasPrefix(p, "~"):
		return scopeExternal, raw + " is in another user's home directory"
	case filepath.IsAbs(p):
		abs = filepath.Clean(p)
	default:
		base := cwd
		if base == "" {
			base = ws
		}
		switch base {
		case unknownDir:
			return scopeExternal, raw + " is relative to a directory that cannot be known"
		case "":
			if c := filepath.Clean(p); c == ".." || strings.HasPrefix(c, "../") {
				return scopeExternal, raw + " leaves the workspace"
			}
			return scopeWorkspace, raw + " is in the workspace"
		}
		abs = filepath.Join(base, p)
	}
	if isHarmlessDevice(abs) {
		return scopeNone, ""
	}
	rws := d.realWorkspace()
	base := ""
	if rws == ws {
		base = rws // the workspace is real: resolve only what lies below it
	}
	real := pathname.RealFrom(abs, base)
	where := raw
	if real != abs {
		where = raw + " resolves to " + real + ","
	}
	direct := !indirect && !pathname.HasDotDot(p) && (real == abs || onlyTempRootLinked(abs, real))
	switch {
	case isSensitivePath(real):
		return scopeSystem, where + " may hold credentials"
	case ws != "" && (pathname.Within(ws, real) || pathname.Within(rws, real)):
		return scopeWorkspace, where + " is in the workspace"
	case home != "" && home != "/" && pathname.Within(home, real):
		return scopeExternal, where + " is outside the workspace"
	case direct && isTempPath(real):
		return scopeNone, ""
	case isSystemPath(real):
		return scopeSystem, where + " is a system path"
	case !direct:
		return scopeExternal, where + " leaves the workspace"
	}
	return scopeExternal, where + " is outside the workspace"
}

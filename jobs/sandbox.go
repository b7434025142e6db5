package jobs

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// checkPath returns why s cannot be a sandbox path (a message that may hold
// valueMark), or "". A path is absolute, ~ or ~/… (the home directory), or relative
// to the spec's directory.
func checkPath(s string) string {
	switch {
	case s == "":
		return "empty path"
	case strings.ContainsRune(s, 0):
		return "path " + valueMark + " contains a NUL byte"
	case strings.HasPrefix(s, "~") && !isHomePath(s):
		return "path " + valueMark + ": ~user is not supported; write ~/… for the home directory, or an absolute path"
	}
	return ""
}

// isHomePath reports whether p is ~ or starts with ~/, which the runner expands.
func isHomePath(p string) bool { return p == "~" || strings.HasPrefix(p, "~/") }

// resolvePath keeps a home path as written and makes any other absolute and clean
// against the spec directory dir.
func resolvePath(dir, p string) string {
	if isHomePath(p) {
		return p
	}
	return under(dir, p)
}

// resolvePaths resolves each of paths with resolvePath; it returns nil for an empty list.
func resolvePaths(dir string, paths []string) []string {
	if len(paths) == 0 {
		return nil
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = resolvePath(dir, p)
	}
	return out
}

// resolveHosts lower-cases the entries of a network allow list; it returns nil for an
// empty list, which allows any host.
func resolveHosts(hosts []string) []string {
	if len(hosts) == 0 {
		return nil
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = strings.ToLower(h)
	}
	return out
}

// checkHost returns why s cannot be an entry of network.allow (a message that may hold
// valueMark), or "": it must be a host name, "*.domain", ".domain" or an IP address
// without a zone, and never has a port, since the proxy does not filter ports.
func checkHost(s string) string {
	if s == "" {
		return "empty host"
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return ""
	}
	switch {
	case strings.Contains(s, "://"):
		return valueMark + " is a URL: give the host name alone"
	case s == "*":
		return valueMark + ` would allow every host: leave network.allow out for that, or write "*.domain"`
	}
	if host, port, err := net.SplitHostPort(s); err == nil && host != "" && allDigits(port) {
		return valueMark + " has a port, but ports are not filtered: give the host without it"
	}
	name := s
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		name = rest
	} else if rest, ok := strings.CutPrefix(s, "."); ok {
		name = rest
	}
	if !validHostname(name) {
		return "invalid host " + valueMark + `: want a host name, "*.domain", ".domain" or an IP address`
	}
	return ""
}

// validHostname reports whether s is a DNS host name: dot-separated labels of 1 to 63
// letters, digits and '-', not starting or ending with '-', at most 253 bytes in all,
// the last label not all digits (that would be a malformed IP address).
func validHostname(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := range len(l) {
			c := l[i]
			if !alnum(c) && c != '-' {
				return false
			}
		}
	}
	return !allDigits(labels[len(labels)-1])
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// duplicates reports each entry of list, the value at path, whose canonical form (by
// canon) repeats an earlier entry's. Entries with problems of their own are skipped.
func (v *validator) duplicates(path, what string, list []string, canon func(string) string) {
	s := v.s
	first := map[string]int{}
	for i, e := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		if v.hasProblem(p) {
			continue
		}
		c := canon(e)
		if j, dup := first[c]; dup {
			v.ps.add(s.at(p), p, "duplicate %s %q (first at %s)", what, e, s.at(fmt.Sprintf("%s[%d]", path, j)))
			continue
		}
		first[c] = i
	}
}

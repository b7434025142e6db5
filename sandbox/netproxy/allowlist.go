package netproxy

import (
	"fmt"
	"net/netip"
	"strings"
)

// Allowlist matches host names and IP literals. Its zero value, like the list parsed
// from no entries, allows any host.
type Allowlist struct {
	exact map[string]struct{}     // names allowed as written
	sub   map[string]struct{}     // names whose subdomains are allowed
	ips   map[netip.Addr]struct{} // IP literals, unmapped
}

// ParseAllowlist parses allowlist entries:
//
//	example.com     that name only
//	*.example.com   subdomains of example.com, not example.com itself
//	.example.com    example.com and its subdomains (the curl NO_PROXY style)
//	192.0.2.1, ::1  that IP literal (also [::1]); names never match an IP entry
//
// Entries are case-insensitive and a trailing dot is ignored. No entries means any
// host is allowed.
func ParseAllowlist(entries []string) (Allowlist, error) {
	a := Allowlist{exact: map[string]struct{}{}, sub: map[string]struct{}{}, ips: map[netip.Addr]struct{}{}}
	for _, e := range entries {
		if err := a.add(e); err != nil {
			return Allowlist{}, fmt.Errorf("netproxy: allowlist entry %q: %w", e, err)
		}
	}
	return a, nil
}

func (a *Allowlist) add(entry string) error {
	e, ascii := lowerASCII(strings.TrimSpace(entry))
	switch {
	case !ascii:
		// strings.ToLower would map some of them to ASCII (İ to i), and Allows, which
		// sees no other bytes, would then never match the entry as written.
		return fmt.Errorf("not ASCII: give an internationalized name in its punycode (xn--) form")
	case e == "":
		return fmt.Errorf("empty")
	case e == "*" || e == "*.":
		return fmt.Errorf("a bare wildcard: use an empty list to allow any host")
	case strings.Contains(e, "://"):
		return fmt.Errorf("a URL: want a host name such as example.com")
	case strings.Contains(e, "/"):
		return fmt.Errorf("not a host name (CIDR ranges and paths are not supported)")
	}
	if ip, ok := parseIP(e); ok {
		a.ips[ip] = struct{}{}
		return nil
	}
	if strings.Contains(e, ":") {
		return fmt.Errorf("has a port or is a malformed IP address: ports are not supported")
	}
	name, wild, both := e, false, false
	switch {
	case strings.HasPrefix(e, "*."):
		name, wild = e[2:], true
	case strings.HasPrefix(e, "."):
		name, both = e[1:], true
	}
	name = strings.TrimSuffix(name, ".")
	if err := checkName(name); err != nil {
		return err
	}
	if !wild {
		a.exact[name] = struct{}{}
	}
	if wild || both {
		a.sub[name] = struct{}{}
	}
	return nil
}

// checkName reports whether name is a host name: dot-separated labels of letters,
// digits, hyphens and underscores, with a top-level label that is not all digits (so
// that "127.1" cannot be listed as a name and later reach an address).
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("no host name")
	}
	if len(name) > 253 {
		return fmt.Errorf("host name longer than 253 characters")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" {
			return fmt.Errorf("empty label")
		}
		if len(l) > 63 {
			return fmt.Errorf("label %q longer than 63 characters", l)
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("label %q starts or ends with a hyphen", l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if c == '*' {
				return fmt.Errorf("a wildcard is allowed only as a leading \"*.\"")
			}
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
				return fmt.Errorf("character %q not allowed in a host name", c)
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return fmt.Errorf("not an IP address, and a host name's last label cannot be all digits")
	}
	return nil
}

// parseIP parses an IP literal, bracketed or not, without a zone.
func parseIP(s string) (netip.Addr, bool) {
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	ip, err := netip.ParseAddr(s)
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

// Any reports whether the list allows any host.
func (a Allowlist) Any() bool {
	return len(a.exact) == 0 && len(a.sub) == 0 && len(a.ips) == 0
}

// Allows reports whether host, a name or an IP literal without a port, is on the list.
// Matching is case-insensitive and ignores a trailing dot; an IP literal matches only
// an IP entry.
func (a Allowlist) Allows(host string) bool {
	if a.Any() || a.Names(host) {
		return true
	}
	h, ok := hostKey(host)
	if _, isIP := parseIP(h); !ok || isIP {
		return false // an IP literal matches its entry alone, which Names looked up
	}
	for i := strings.IndexByte(h, '.'); i >= 0; i = strings.IndexByte(h, '.') {
		h = h[i+1:]
		if _, ok := a.sub[h]; ok {
			return true
		}
	}
	return false
}

// Names reports whether an entry names host exactly: a name as written (or the
// domain of a ".domain" entry) or an IP literal, not a "*.domain" wildcard, nor the
// empty list. Such a host is reached at an internal address too (a loopback, link-local
// or private one), which a wildcard, whose names the tools choose, never reaches.
func (a Allowlist) Names(host string) bool {
	h, ok := hostKey(host)
	if !ok {
		return false
	}
	if ip, ok := parseIP(h); ok {
		_, ok = a.ips[ip]
		return ok
	}
	_, ok = a.exact[h]
	return ok
}

// hostKey is host as the entries are kept: in lower case, without a trailing dot;
// false when it is empty or not ASCII (no entry has other bytes, and ToLower maps some
// of them to ASCII).
func hostKey(host string) (string, bool) {
	h, ok := lowerASCII(strings.TrimSuffix(host, "."))
	return h, ok && h != ""
}

func lowerASCII(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return "", false
		}
	}
	return strings.ToLower(s), true
}

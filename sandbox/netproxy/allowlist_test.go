package netproxy

import (
	"strings"
	"testing"

	"github.com/agentrun/agentrun/fuzzguard"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAllowlist(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []string
		err     string // "" when valid
	}{
		{name: "none", entries: nil},
		{name: "exact", entries: []string{"example.com"}},
		{name: "subdomains", entries: []string{"*.example.com"}},
		{name: "domain and subdomains", entries: []string{".example.com"}},
		{name: "trailing dot and case", entries: []string{"Example.COM."}},
		{name: "ipv4", entries: []string{"192.0.2.1"}},
		{name: "ipv6", entries: []string{"::1", "[2001:db8::1]"}},
		{name: "underscore and digits", entries: []string{"_acme.x1.example.com", "proxy.golang.org"}},
		{name: "empty", entries: []string{""}, err: `entry "": empty`},
		{name: "bare wildcard", entries: []string{"*"}, err: `entry "*": a bare wildcard`},
		{name: "inner wildcard", entries: []string{"a.*.example.com"}, err: `entry "a.*.example.com": a wildcard is allowed only as a leading`},
		{name: "url", entries: []string{"https://example.com"}, err: `entry "https://example.com": a URL`},
		{name: "non-ascii", entries: []string{"İ"}, err: `entry "İ": not ASCII`},
		{name: "port", entries: []string{"example.com:443"}, err: `entry "example.com:443": has a port`},
		{name: "cidr", entries: []string{"10.0.0.0/8"}, err: `entry "10.0.0.0/8": not a host name (CIDR`},
		{name: "empty label", entries: []string{"a..example.com"}, err: `entry "a..example.com": empty label`},
		{name: "hyphen", entries: []string{"-a.example.com"}, err: `starts or ends with a hyphen`},
		{name: "space inside", entries: []string{"exa mple.com"}, err: `character ' ' not allowed`},
		{name: "numeric tld", entries: []string{"127.1"}, err: `entry "127.1": not an IP address`},
		{name: "zone", entries: []string{"fe80::1%eth0"}, err: `entry "fe80::1%eth0": has a port or is a malformed IP address`},
		{name: "long label", entries: []string{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com"}, err: `longer than 63`},
		{name: "one bad among good", entries: []string{"example.com", "bad_entry:1"}, err: `entry "bad_entry:1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseAllowlist(tc.entries)
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, len(tc.entries) == 0, a.Any())
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.Contains(t, err.Error(), "netproxy: allowlist entry")
		})
	}
}

func TestAllows(t *testing.T) {
	a, err := ParseAllowlist([]string{"example.com", "*.wild.test", ".both.test", "192.0.2.1", "::1"})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		host string
		want bool
	}{
		{"exact", "example.com", true},
		{"exact upper case", "EXAMPLE.com", true},
		{"exact trailing dot", "example.com.", true},
		{"exact not subdomain", "www.example.com", false},
		{"exact not suffix", "badexample.com", false},
		{"wildcard subdomain", "a.wild.test", true},
		{"wildcard deep subdomain", "a.b.wild.test", true},
		{"wildcard not domain", "wild.test", false},
		{"wildcard not suffix", "awild.test", false},
		{"dot domain", "both.test", true},
		{"dot subdomain", "x.both.test", true},
		{"dot not suffix", "xboth.test", false},
		{"ipv4", "192.0.2.1", true},
		{"ipv4 other", "192.0.2.2", false},
		{"ipv4 mapped", "::ffff:192.0.2.1", true},
		{"ipv6", "::1", true},
		{"ipv6 bracketed", "[::1]", true},
		{"ipv6 long form", "0:0:0:0:0:0:0:1", true},
		{"loopback not listed", "127.0.0.1", false},
		{"short ipv4 form", "127.1", false},
		{"empty", "", false},
		{"dot", ".", false},
		{"other", "evil.example", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, a.Allows(tc.host))
		})
	}
	t.Run("empty list allows any", func(t *testing.T) {
		var zero Allowlist
		assert.True(t, zero.Allows("evil.example"))
		none, err := ParseAllowlist(nil)
		require.NoError(t, err)
		assert.True(t, none.Allows("127.0.0.1"))
	})
}

func FuzzAllowlist(f *testing.F) {
	f.Add("example.com,*.example.com,.example.com", "www.example.com")
	f.Add("192.0.2.1,[::1]", "::ffff:192.0.2.1")
	f.Fuzz(func(t *testing.T, entries, host string) {
		fuzzguard.Run(len(entries)+len(host), func() {
			var list []string
			start := 0
			for i := 0; i <= len(entries); i++ {
				if i == len(entries) || entries[i] == ',' {
					list = append(list, entries[start:i])
					start = i + 1
				}
			}
			a, err := ParseAllowlist(list)
			if err != nil {
				return
			}
			_ = a.Allows(host)
			for _, e := range list {
				e = strings.TrimSpace(e)
				if w, ok := strings.CutPrefix(e, "*."); ok {
					assert.True(t, a.Allows("a."+w), "entry %q allows a subdomain", e)
				} else {
					assert.True(t, a.Allows(strings.TrimPrefix(e, ".")), "entry %q allows itself", e)
				}
			}
		})
	})
}

package netproxy

import (
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingListener is a loopback listener that counts the connections it accepts.
func countingListener(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	accepted = &atomic.Int32{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = l.Close(); <-done })
	return l.Addr().String(), accepted
}

// TestInternalAddresses: a list that allows any host, or a host by a wildcard, lets the
// tools reach public addresses only. The host's own services on loopback, the cloud's
// instance metadata on link-local, and the private network stay out of reach, refused
// before any connection is made (the listener accepts none); a host that the list
// names exactly, by name or IP address, is reached wherever it resolves.
func TestInternalAddresses(t *testing.T) {
	t.Parallel()
	addr, accepted := countingListener(t)
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	for _, tt := range []struct {
		name, target string
		allow        []string
		reached      bool
	}{
		{name: "any host, loopback by address", target: addr},
		{name: "any host, loopback by name", target: "localhost:" + port},
		{name: "any host, loopback as IPv4 in IPv6", target: "[::ffff:127.0.0.1]:" + port},
		{name: "any host, this network", target: "0.0.0.0:" + port},
		{name: "any host, instance metadata", target: "169.254.169.254:80"},
		{name: "a leading dot names the domain itself", target: "localhost:" + port, allow: []string{".localhost"}, reached: true},
		{name: "exact address", target: addr, allow: []string{"127.0.0.1"}, reached: true},
		{name: "exact name", target: "localhost:" + port, allow: []string{"localhost"}, reached: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.allow...)
			before := accepted.Load()
			status, body := raw(t, r.fwd, connectRequest(tt.target))
			if tt.reached {
				assert.Equal(t, http.StatusOK, status, body)
				return
			}
			assert.Equal(t, http.StatusForbidden, status, body)
			assert.Contains(t, body, "refused: it is "+internalWord(t, tt.target))
			assert.Contains(t, body, "which only a host that network.allow names exactly may reach")
			assert.Equal(t, before, accepted.Load(), "the proxy connected")
			vs := r.violations()
			require.Len(t, vs, 1)
			assert.Equal(t, KindNetworkDenied, vs[0].Kind)
			assert.Equal(t, tt.target, vs[0].Target)
		})
	}
}

// internalWord is the start of the reason the proxy gives for target's address.
func internalWord(t *testing.T, target string) string {
	t.Helper()
	host, _, err := net.SplitHostPort(target)
	require.NoError(t, err)
	if host == "localhost" {
		return "a loopback address"
	}
	ip, err := netip.ParseAddr(host)
	require.NoError(t, err)
	return internal(ip)
}

func TestInternal(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1":          "a loopback address",
		"127.9.9.9":          "a loopback address",
		"::1":                "a loopback address",
		"::ffff:127.0.0.1":   "a loopback address",
		"0.0.0.0":            "an address of this host",
		"0.1.2.3":            "an address of this host",
		"::":                 "an address of this host",
		"169.254.169.254":    "a link-local address",
		"fe80::1":            "a link-local address",
		"10.1.2.3":           "a private address",
		"172.16.0.1":         "a private address",
		"192.168.1.1":        "a private address",
		"fd00:ec2::254":      "a private address",
		"100.100.100.200":    "a shared address (carrier-grade NAT)",
		"224.0.0.1":          "a multicast address",
		"ff02::1":            "a multicast address",
		"255.255.255.255":    "a reserved address",
		"240.0.0.1":          "a reserved address",
		"64:ff9b::a9fe:a9fe": "a link-local address",
		"8.8.8.8":            "",
		"2606:4700::1111":    "",
		"172.32.0.1":         "",
		"100.128.0.1":        "",
	} {
		t.Run(addr, func(t *testing.T) {
			t.Parallel()
			got := internal(netip.MustParseAddr(addr))
			if want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, want)
		})
	}
}

// TestNames: the entries that name a host exactly, which reach it at an internal address
// too, against those that allow it by a wildcard (Allows).
func TestNames(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		entries []string
		host    string
		names   bool
	}{
		{entries: []string{"db.corp"}, host: "db.corp", names: true},
		{entries: []string{"db.corp"}, host: "DB.corp.", names: true},
		{entries: []string{"*.corp"}, host: "db.corp"},
		{entries: []string{".corp"}, host: "corp", names: true},
		{entries: []string{".corp"}, host: "db.corp"},
		{entries: []string{"10.0.0.5"}, host: "10.0.0.5", names: true},
		{entries: []string{"::1"}, host: "[::1]", names: true},
		{entries: nil, host: "localhost"},
	} {
		a, err := ParseAllowlist(tt.entries)
		require.NoError(t, err)
		assert.Equal(t, tt.names, a.Names(tt.host), "%v names %s", tt.entries, tt.host)
		assert.True(t, a.Allows(tt.host), "%v allows %s", tt.entries, tt.host)
	}
}

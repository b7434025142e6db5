//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

// sockaddr4 and sockaddr6 lay out a struct sockaddr_in and sockaddr_in6 as a tool's
// memory holds them.
func sockaddr4(a netip.AddrPort) []byte {
	b := make([]byte, unix.SizeofSockaddrInet4)
	binary.NativeEndian.PutUint16(b, unix.AF_INET)
	binary.BigEndian.PutUint16(b[2:], a.Port())
	ip := a.Addr().As4()
	copy(b[4:], ip[:])
	return b
}

func sockaddr6(a netip.AddrPort) []byte {
	b := make([]byte, unix.SizeofSockaddrInet6)
	binary.NativeEndian.PutUint16(b, unix.AF_INET6)
	binary.BigEndian.PutUint16(b[2:], a.Port())
	ip := a.Addr().As16()
	copy(b[8:], ip[:])
	return b
}

func TestParseSockaddr(t *testing.T) {
	proxy := netip.MustParseAddrPort("127.0.0.1:8080")
	unspec := make([]byte, 16) // AF_UNSPEC: a TCP socket's disconnect
	for name, tc := range map[string]struct {
		in     []byte
		family uint16
		want   netip.AddrPort
		ok     bool
	}{
		"ipv4":               {sockaddr4(proxy), unix.AF_INET, proxy, true},
		"ipv4 other host":    {sockaddr4(netip.MustParseAddrPort("127.0.0.2:8080")), unix.AF_INET, netip.MustParseAddrPort("127.0.0.2:8080"), true},
		"ipv4 short":         {sockaddr4(proxy)[:8], unix.AF_INET, netip.AddrPort{}, false},
		"ipv4-mapped ipv6":   {sockaddr6(netip.MustParseAddrPort("[::ffff:127.0.0.1]:8080")), unix.AF_INET6, proxy, true},
		"ipv6 loopback":      {sockaddr6(netip.MustParseAddrPort("[::1]:8080")), unix.AF_INET6, netip.MustParseAddrPort("[::1]:8080"), true},
		"ipv6 short":         {sockaddr6(proxy)[:20], unix.AF_INET6, netip.AddrPort{}, false},
		"unspecified family": {unspec, unix.AF_UNSPEC, netip.AddrPort{}, false},
		"unix family":        {append([]byte{unix.AF_UNIX, 0}, "/run/docker.sock"...), unix.AF_UNIX, netip.AddrPort{}, false},
		"family alone":       {[]byte{unix.AF_INET, 0}, unix.AF_INET, netip.AddrPort{}, false},
	} {
		t.Run(name, func(t *testing.T) {
			family, got, ok := parseSockaddr(tc.in)
			assert.Equal(t, tc.family, family)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// FuzzParseSockaddr checks that no address a tool can write makes parseSockaddr
// panic, and that an address it accepts is the one the bytes lay out.
func FuzzParseSockaddr(f *testing.F) {
	f.Add(sockaddr4(netip.MustParseAddrPort("127.0.0.1:8080")))
	f.Add(sockaddr6(netip.MustParseAddrPort("[::ffff:127.0.0.1]:8080")))
	f.Add([]byte{unix.AF_INET, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 2 || len(b) > maxSockaddr {
			return // connectFor refuses these before parsing
		}
		family, a, ok := parseSockaddr(b)
		if !ok {
			return
		}
		switch family {
		case unix.AF_INET:
			assert.Equal(t, sockaddr4(a)[:8], b[:8], "the family, port and address")
		case unix.AF_INET6:
			assert.Equal(t, a.Port(), binary.BigEndian.Uint16(b[2:4]))
			assert.Equal(t, netip.AddrFrom16([16]byte(b[8:24])).Unmap(), a.Addr())
		default:
			t.Fatalf("family %d accepted", family)
		}
	})
}

package netproxy

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Ranges of internal addresses that netip has no predicate for.
var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")     // "this host" (RFC 1122); a connect to it reaches the host
	sharedNAT   = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT (RFC 6598); a cloud's metadata too
	reserved4   = netip.MustParsePrefix("240.0.0.0/4")   // reserved, and the broadcast address
	nat64       = netip.MustParsePrefix("64:ff9b::/96")  // an IPv4 address through NAT64 (RFC 6052)
)

// internal says what kind of address ip is when it is no public one: the host's own
// (loopback, this host), link-local (a cloud's instance metadata at 169.254.169.254),
// private, shared, multicast or reserved. "" for a public address. The proxy reaches an
// internal address only for a host that the allowlist names exactly (Names).
func internal(ip netip.Addr) string {
	ip = ip.Unmap()
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:]))
	}
	switch {
	case ip.IsLoopback():
		return "a loopback address, a service of the host's own"
	case ip.IsUnspecified() || thisNetwork.Contains(ip):
		return "an address of this host"
	case ip.IsLinkLocalUnicast():
		return "a link-local address, where clouds serve instance metadata and credentials"
	case ip.IsPrivate():
		return "a private address, of the local network"
	case sharedNAT.Contains(ip):
		return "a shared address (carrier-grade NAT), where clouds serve metadata too"
	case ip.IsMulticast():
		return "a multicast address"
	case reserved4.Contains(ip):
		return "a reserved address"
	}
	return ""
}

// internalError is a dial the proxy refused before connecting: addr is internal.
type internalError struct {
	addr string // the address dialled, ip:port
	why  string // internal's word for it
}

func (e *internalError) Error() string {
	return fmt.Sprintf("%s is %s", e.addr, e.why)
}

// reachInternal is the context key of a dial that may reach internal addresses.
type reachInternal struct{}

// withInternal marks ctx as the dial of a host the allowlist names exactly.
func withInternal(ctx context.Context) context.Context {
	return context.WithValue(ctx, reachInternal{}, true)
}

// guardDial is the default dialer's check of each address it is about to connect to,
// after the name is resolved: an internal one fails with an *internalError, unless the
// dial's host is named exactly. Checking the address the socket connects to, not a
// name resolved beforehand, leaves a name that resolves anew (DNS rebinding) no way
// around it.
func guardDial(ctx context.Context, _, address string, _ syscall.RawConn) error {
	if ok, _ := ctx.Value(reachInternal{}).(bool); ok {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &internalError{addr: address, why: "an address the proxy cannot read"}
	}
	if why := internal(ap.Addr()); why != "" {
		return &internalError{addr: address, why: why}
	}
	return nil
}

// defaultDial dials with a timeout and guardDial.
func defaultDial() func(ctx context.Context, network, addr string) (net.Conn, error) {
	return (&net.Dialer{Timeout: defaultDialTimeout, ControlContext: guardDial}).DialContext
}

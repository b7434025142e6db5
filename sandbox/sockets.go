package sandbox

// Sockets is what socket(2) may make under the seccomp filter (ApplySeccomp); every
// other family, and every other socket of TCP's families, is refused with EPERM.
// socketpair(2) stays allowed: its sockets reach nothing outside.
type Sockets struct {
	// Any are the families (unix.AF_NETLINK, ...) whose sockets of every type are
	// allowed.
	Any []int
	// TCP are the families allowed TCP sockets alone: SOCK_STREAM of protocol 0 or
	// IPPROTO_TCP, the only sockets Landlock's network rules confine. UDP, ICMP ping
	// and Multipath TCP sockets, which go past those rules, are refused.
	TCP []int
	// Netlink, when not nil, are the protocols of the netlink sockets allowed
	// (unix.NETLINK_ROUTE, ...); AF_NETLINK must then not be in Any. In the host's
	// network namespace a netlink socket of another protocol reaches more than the
	// kernel: NETLINK_USERSOCK, for one, a host daemon's.
	Netlink []int
	// Connect hands every connect(2) to the filter's listener (SECCOMP_RET_USER_NOTIF),
	// which ServeConnects answers, and refuses sendto(2), sendmsg(2) and sendmmsg(2)
	// with MSG_FASTOPEN, which would connect without it. Landlock's network rules name
	// ports, not hosts: a tool allowed the proxy's port could otherwise connect to any
	// host on that port.
	Connect bool
	// NoListen refuses listen(2): on a socket not yet bound it binds a free port of
	// every address without bind(2), which Landlock's bind rule does not see, and the
	// listener would serve anyone who can reach the machine.
	NoListen bool
}

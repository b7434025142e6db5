//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// auditArch is the seccomp_data arch of amd64's native system calls.
const auditArch = unix.AUDIT_ARCH_X86_64

// foreignNrBit marks the numbers of the x32 ABI, whose calls share amd64's arch value.
const foreignNrBit = 0x40000000

// archDenials are the calls only amd64 has that the filter refuses.
var archDenials = []denial{
	{name: "iopl", nr: unix.SYS_IOPL, why: "raises I/O privilege level"},
	{name: "ioperm", nr: unix.SYS_IOPERM, why: "opens I/O ports"},
}

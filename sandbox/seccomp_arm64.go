//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// auditArch is the seccomp_data arch of arm64's native system calls.
const auditArch = unix.AUDIT_ARCH_AARCH64

// foreignNrBit is 0: arm64's foreign ABI (arm32) has an arch value of its own.
const foreignNrBit = 0

// archDenials is empty: arm64 has no call of its own that the filter refuses.
var archDenials []denial

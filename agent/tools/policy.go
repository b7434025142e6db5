package tools

import (
	"fmt"
	"strconv"
)

// Policy is the seed's four-digit bash_mode: one octal digit each for the scopes
// system, external, network and workspace, with bits read=4, write=2, execute=1. The
// zero Policy denies everything.
type Policy struct {
	bits uint16 // 12 bits: system<<9 | external<<6 | network<<3 | workspace
}

// DefaultMode is the default bash_mode: no system access, external read, network read
// and write, workspace read, write and execute.
const DefaultMode = "0467"

// ParsePolicy parses a bash_mode such as "0467". An invalid mode returns the zero
// Policy, which denies everything, together with the error.
func ParsePolicy(mode string) (Policy, error) {
	if len(mode) != 4 {
		return Policy{}, fmt.Errorf("bash_mode %q: want four octal digits such as %q", mode, DefaultMode)
	}
	n, err := strconv.ParseUint(mode, 8, 16)
	if err != nil {
		return Policy{}, fmt.Errorf("bash_mode %q: want four octal digits such as %q", mode, DefaultMode)
	}
	return Policy{bits: uint16(n)}, nil
}

// String returns the mode as four octal digits.
func (p Policy) String() string { return fmt.Sprintf("%04o", p.bits) }

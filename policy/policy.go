package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Access is a 12-bit set of permissions in the layout of a bash_mode: one octal digit
// each for the scopes system, external, network and workspace (most significant
// first), with bits read=4, write=2, execute=1. It is both what a call requires and
// what a Policy grants.
type Access uint16

// The twelve permission bits.
const (
	WorkspaceExecute Access = 1 << iota
	WorkspaceWrite
	WorkspaceRead
	NetworkExecute
	NetworkWrite
	NetworkRead
	ExternalExecute
	ExternalWrite
	ExternalRead
	SystemExecute
	SystemWrite
	SystemRead
)

// allAccess is every bit.
const allAccess Access = 0o7777

// String returns the access as four octal digits, such as "0467".
func (a Access) String() string { return fmt.Sprintf("%04o", uint16(a&allAccess)) }

var (
	scopeNames = [4]string{"workspace", "network", "external", "system"}
	permNames  = [3]string{"execute", "write", "read"}
)

// bitName names bit i (0 = workspace execute … 11 = system read).
func bitName(i int) string { return scopeNames[i/3] + " " + permNames[i%3] }

// Policy is the seed's four-digit bash_mode: one octal digit each for the scopes
// system, external, network and workspace, with bits read=4, write=2, execute=1. The
// zero Policy denies everything.
type Policy struct {
	bits Access
}

// DefaultMode is the default bash_mode: no system access, external read, network read
// and write, workspace read, write and execute.
const DefaultMode = "0467"

// Parse parses a bash_mode such as "0467". An invalid mode returns the zero
// Policy, which denies everything, together with the error.
func Parse(mode string) (Policy, error) {
	if len(mode) != 4 {
		return Policy{}, fmt.Errorf("bash_mode %q: want four octal digits such as %q", mode, DefaultMode)
	}
	n, err := strconv.ParseUint(mode, 8, 16)
	if err != nil {
		return Policy{}, fmt.Errorf("bash_mode %q: want four octal digits such as %q", mode, DefaultMode)
	}
	return Policy{bits: Access(n)}, nil
}

// New returns the Policy that grants exactly a.
func New(a Access) Policy { return Policy{bits: a & allAccess} }

// String returns the mode as four octal digits.
func (p Policy) String() string { return p.bits.String() }

// Access returns the bits the policy grants.
func (p Policy) Access() Access { return p.bits }

// Allows reports whether the policy grants every bit of required. The zero Policy
// allows nothing, not even a call that requires no bits.
func (p Policy) Allows(required Access) bool {
	return p.bits != 0 && required&^p.bits == 0
}

// Op is the kind of file access a file tool makes. Glob and Grep read.
type Op uint8

// The file operations.
const (
	OpRead Op = iota + 1
	OpWrite
)

func (o Op) String() string {
	switch o {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// ErrDenied is wrapped by every *DeniedError, for callers that only need to know that
// the safety policy refused a call.
var ErrDenied = errors.New("blocked by bash safety policy")

// DeniedError is the error of a command or file access that the policy refuses.
type DeniedError struct {
	// Required is what the call needs.
	Required Policy
	// Allowed is what the policy grants.
	Allowed Policy
	// Reason names the missing scope bits and what needed them.
	Reason string
}

// Error returns the seed's block message followed by the reason.
func (e *DeniedError) Error() string {
	msg := "command blocked by bash safety policy (required=" + e.Required.String() +
		" allowed=" + e.Allowed.String() +
		"; mode=system/external/network/workspace bits=4:read,2:write,1:execute)"
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Unwrap returns ErrDenied.
func (e *DeniedError) Unwrap() error { return ErrDenied }

// CheckCommand classifies a Bash command (a heuristic scan, not a sandbox) and returns
// a *DeniedError when the policy does not grant what it requires. d supplies the
// workspace and home directory that paths are scoped against; the zero Dirs judges
// relative paths as in the workspace and "~" as external.
func (p Policy) CheckCommand(command string, d Dirs) error {
	return p.decide(classifyCommand(command, d))
}

// CheckPath returns a *DeniedError when the policy does not allow op on path, which
// is resolved like a file tool's path argument: "~" against d.Home, relative paths
// against d.Workspace, and symbolic links in the existing part of the path
// followed. Paths that leave the workspace need the external (or system) bit of op.
func (p Policy) CheckPath(op Op, path string, d Dirs) error {
	return p.checkScope(op, path, d, false)
}

// CheckOpened is CheckPath for a file opened from the absolute path abs and found at
// real (the path the open really reached). When links led there, shared scratch
// directories are not trusted for it, as CheckPath(abs) would not have trusted them.
func (p Policy) CheckOpened(op Op, abs, real string, d Dirs) error {
	return p.checkScope(op, real, d, real != abs && !onlyTempRootLinked(abs, real))
}

// checkScope decides op on path; indirect distrusts shared scratch directories.
func (p Policy) checkScope(op Op, path string, d Dirs, indirect bool) error {
	var v verdict
	perm := WorkspaceRead
	if op == OpWrite {
		perm = WorkspaceWrite
	}
	sc, why := scopePath(d, path, "", indirect)
	v.add(sc.access(perm), why)
	return p.decide(v)
}

// decide turns a verdict into nil or a *DeniedError.
func (p Policy) decide(v verdict) error {
	if p.Allows(v.need) {
		return nil
	}
	reason := v.explain(v.need &^ p.bits)
	if p.bits == 0 {
		reason = "bash_mode 0000 (or an invalid mode) grants nothing"
	}
	return &DeniedError{Required: New(v.need), Allowed: p, Reason: reason}
}

// verdict is what a call requires, with the first cause recorded for every bit.
type verdict struct {
	need Access
	why  [12]string
}

// add requires a, recording why for the bits not already required.
func (v *verdict) add(a Access, why string) {
	a &= allAccess
	for i := range 12 {
		bit := Access(1) << i
		if a&bit != 0 && v.need&bit == 0 {
			v.why[i] = why
		}
	}
	v.need |= a
}

// merge adds everything o requires.
func (v *verdict) merge(o verdict) {
	for i := range 12 {
		if bit := Access(1) << i; o.need&bit != 0 {
			v.add(bit, o.why[i])
		}
	}
}

// explain describes the missing bits, most significant first.
func (v *verdict) explain(missing Access) string {
	var parts []string
	for i := 11; i >= 0; i-- {
		if missing&(Access(1)<<i) == 0 {
			continue
		}
		part := "missing " + bitName(i)
		if v.why[i] != "" {
			part += " (" + v.why[i] + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// ErrNotLinux is returned by every confinement call on an operating system other than
// Linux, where none of the kernel mechanisms exist.
var ErrNotLinux = errors.New("kernel sandboxing is unsupported on this operating system")

// Feature is one kernel mechanism as found by Probe.
type Feature struct {
	OK bool
	// Reason says why the feature is missing, or gives a short detail when it is there.
	Reason string
}

// Report is what Probe found on this machine.
type Report struct {
	UserNS, Landlock, Seccomp, NoNewPrivs, CgroupV2 Feature
	// Ptrace is agentrun's access to its tools' descriptors and memory, with which it
	// makes their connections at level landlock (ServeConnects).
	Ptrace Feature
	// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
	LandlockABI int
}

// need is one feature a level cannot do without.
type need struct {
	name string
	f    Feature
}

// needs lists what each level requires.
//
// LevelStrict needs user namespaces, seccomp and no_new_privs but not Landlock: the new
// root inside the mount namespace already confines the file system view, and Landlock
// is added on top as defence in depth whenever the kernel has it (its absence shows in
// the recorded layers, never silently). Requiring it would push every pre-5.13 kernel
// (RHEL 8, Debian 11's 5.10) from strict straight down to off, because LevelLandlock
// needs Landlock too. LevelLandlock needs Landlock, seccomp and no_new_privs. LevelOff
// needs nothing.
func (r Report) needs(l Level) []need {
	nnp := need{"no_new_privs", r.NoNewPrivs}
	sc := need{"seccomp", r.Seccomp}
	switch l {
	case LevelStrict:
		return []need{{"user namespaces", r.UserNS}, sc, nnp}
	case LevelLandlock:
		return []need{{"landlock", r.Landlock}, sc, nnp}
	default:
		return nil
	}
}

// Best is the strongest level this machine supports; see Supports for what each needs.
func (r Report) Best() Level {
	for _, l := range Levels {
		if r.Supports(l) == nil {
			return l
		}
	}
	return LevelOff
}

// Supports says whether level l can be had here: nil, or an error naming each missing
// feature and why it is missing. LevelOff is always supported.
func (r Report) Supports(l Level) error {
	if _, err := ParseLevel(string(l)); err != nil {
		return err
	}
	var missing []string
	for _, n := range r.needs(l) {
		if !n.f.OK {
			missing = append(missing, fmt.Sprintf("needs %s: %s", n.name, n.f.Reason))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("sandbox level %s %s", l, strings.Join(missing, "; "))
}

// LandlockNetABI is the first Landlock ABI with network rules (Linux 6.7), with which
// level landlock keeps the tools' TCP to the proxy's port.
const LandlockNetABI = 4

// SupportsNetwork says whether tools at level l, which this machine supports, can have
// the network through the proxy alone: nil, or why not. At level landlock that takes
// Landlock's network rules; without them a tool's TCP would reach any host directly.
// It also takes ptrace access to the tools, with which agentrun makes their
// connections to the proxy. Level strict has its network namespace, and off confines
// nothing.
func (r Report) SupportsNetwork(l Level) error {
	switch {
	case l != LevelLandlock:
		return nil
	case r.LandlockABI < LandlockNetABI:
		return landlockNetError(r.LandlockABI)
	case !r.Ptrace.OK:
		return fmt.Errorf("sandbox level landlock with network needs ptrace access to the tools, to make their connections to the proxy: %s", r.Ptrace.Reason)
	}
	return nil
}

// landlockNetError says that Landlock ABI abi, below LandlockNetABI, cannot keep TCP to
// the proxy.
func landlockNetError(abi int) error {
	return fmt.Errorf("sandbox level landlock with network needs Landlock ABI %d (Linux 6.7) to keep the tools' TCP to the proxy; this kernel has ABI %d",
		LandlockNetABI, abi)
}

// WriteText writes the report for people, as `agentrun sandbox check` prints it: one
// aligned line per feature, the Landlock ABI, why the best level cannot give tools the
// network (when it cannot) and the best level.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	for _, n := range []need{
		{"user namespaces", r.UserNS},
		{"landlock", r.Landlock},
		{"seccomp", r.Seccomp},
		{"no_new_privs", r.NoNewPrivs},
		{"cgroup v2", r.CgroupV2},
		{"ptrace of tools", r.Ptrace},
	} {
		yes := "no"
		if n.f.OK {
			yes = "yes"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\n", n.name, yes, n.f.Reason) // into a strings.Builder, which never fails
	}
	_, _ = fmt.Fprintf(tw, "landlock ABI\t%d\t\n", r.LandlockABI)
	_ = tw.Flush() // a strings.Builder never fails
	var out strings.Builder
	for line := range strings.Lines(b.String()) {
		out.WriteString(strings.TrimRight(line, " \n") + "\n")
	}
	best := r.Best()
	if err := r.SupportsNetwork(best); err != nil {
		out.WriteString("network: " + err.Error() + "\n")
	}
	if _, err := fmt.Fprintf(w, "%sbest level: %s\n", out.String(), best); err != nil {
		return fmt.Errorf("sandbox check: %w", err)
	}
	return nil
}

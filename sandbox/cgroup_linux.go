package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// LayerPids is a pids cgroup that bounds the processes (and threads) of a session.
const LayerPids Layer = "cgroup_pids"

// DefaultMaxPids bounds the tasks of one session: room for builds and test runs, not
// for a fork bomb.
const DefaultMaxPids = 1024

// Pids is a cgroup that caps how many tasks a session's worker and everything it starts
// may have. RLIMIT_NPROC does not hold for uid 0 (the kernel never applies it to root,
// also when root is mapped into a user namespace), so this is the fork bomb's limit when
// agentrun runs as root; it needs a writable pids hierarchy, cgroup v2 or v1.
type Pids struct {
	dir string
}

var pidsSeq atomic.Int64

// NewPids makes a pids cgroup below this process's own, allowing max tasks. It fails
// when no pids hierarchy is writable (not root, or a container without delegation).
func NewPids(max int) (*Pids, error) {
	base, err := PidsBase()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(base, fmt.Sprintf("agentrun-%d-%d", os.Getpid(), pidsSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("pids cgroup: %w", err)
	}
	return &Pids{dir: dir}, nil
}

// Dir is the cgroup's folder.
func (p *Pids) Dir() string { return p.dir }

// Add moves process pid (and the threads it has) into the cgroup; what it starts
// afterwards is born there.
func (p *Pids) Add(pid int) error {
	if err := os.WriteFile(filepath.Join(p.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("pids cgroup: %w", err)
	}
	return nil
}

// Remove kills whatever is left in the cgroup and removes it.
func (p *Pids) Remove() error {
	for range 100 {
		err := os.Remove(p.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("pids cgroup: %w", err)
		}
		b, _ := os.ReadFile(filepath.Join(p.dir, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		// A killed task leaves the cgroup once it is reaped; the next rmdir succeeds.
		runtime.Gosched()
	}
	return fmt.Errorf("pids cgroup: %s still has tasks", p.dir)
}

// PidsBase is this process's own folder in a writable pids hierarchy, where its
// sessions' cgroups (agentrun-PID-N) go.
func PidsBase() (string, error) {
	for _, dir := range ownPidsDirs() {
		if syscall.Access(dir, 2) == nil { // W_OK
			return dir, nil
		}
	}
	return "", errors.New("pids cgroup: no writable pids hierarchy")
}

// ownPidsDirs are this process's own folders in the pids hierarchies mounted here,
// cgroup v2 first: the v2 ones only where the pids controller is enabled for their
// children.
func ownPidsDirs() []string {
	var dirs []string
	for _, c := range ownCgroups() {
		if c.v2 {
			ctl, err := os.ReadFile(filepath.Join(c.dir, "cgroup.subtree_control"))
			if err != nil || !slices.Contains(strings.Fields(string(ctl)), "pids") {
				continue // v2 without the pids controller enabled for children
			}
		}
		dirs = append(dirs, c.dir)
	}
	return dirs
}

// cgroupDir is this process's own folder in one cgroup hierarchy, below its root.
type cgroupDir struct {
	root, dir string
	v2        bool
}

// ownCgroups are this process's folders in the hierarchies that can hold the pids
// controller: v2, mounted at /sys/fs/cgroup or beside v1 at /sys/fs/cgroup/unified,
// then v1's pids hierarchy (its root when /proc/self/cgroup names none).
func ownCgroups() []cgroupDir {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	v1, v2 := parseCgroups(string(b))
	var out []cgroupDir
	if v2 != "" {
		for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
			out = append(out, cgroupDir{root: root, dir: filepath.Join(root, v2), v2: true})
		}
	}
	const v1Root = "/sys/fs/cgroup/pids"
	return append(out, cgroupDir{root: v1Root, dir: filepath.Join(v1Root, v1)})
}

// parseCgroups reads /proc/PID/cgroup: the path of the process's cgroup in the v1
// hierarchy of the pids controller, and in the v2 hierarchy (either empty when absent).
func parseCgroups(text string) (v1, v2 string) {
	for line := range strings.Lines(text) {
		parts := strings.SplitN(strings.TrimSuffix(line, "\n"), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case slices.Contains(strings.Split(parts[1], ","), "pids"):
			v1 = parts[2]
		}
	}
	return v1, v2
}

// RemoveStalePids removes the empty session cgroups that agentrun processes which no
// longer run left below this process's own: a run killed with SIGKILL cannot remove
// its own, and its workers die with it (their parent-death signal), which leaves the
// folders empty. A cgroup that still has tasks, or whose creator is alive, stays. It
// returns how many it removed; no pids hierarchy is not an error.
func RemoveStalePids() (int, error) {
	base, err := PidsBase()
	if err != nil {
		return 0, nil
	}
	return removeStalePidsIn(base)
}

// removeStalePidsIn is RemoveStalePids in the cgroup folder base.
func removeStalePidsIn(base string) (int, error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return 0, fmt.Errorf("pids cgroup: %w", err)
	}
	n := 0
	for _, e := range entries {
		pid, ok := creatorOf(e.Name())
		if !ok || !e.IsDir() || processExists(pid) {
			continue
		}
		if err := os.Remove(filepath.Join(base, e.Name())); err == nil {
			n++
		}
	}
	return n, nil
}

// PidsOf lists the session cgroups that process pid made (agentrun-PID-N) where this
// process's would go, which a child inherits: none without a writable pids hierarchy.
func PidsOf(pid int) ([]string, error) {
	base, err := PidsBase()
	if err != nil {
		return nil, nil
	}
	return pidsOfIn(base, pid)
}

// pidsOfIn is PidsOf in the cgroup folder base.
func pidsOfIn(base string, pid int) ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(base, fmt.Sprintf("agentrun-%d-*", pid)))
	if err != nil {
		return nil, fmt.Errorf("pids cgroup: %w", err)
	}
	return slices.DeleteFunc(dirs, func(dir string) bool {
		creator, ok := creatorOf(filepath.Base(dir))
		return !ok || creator != pid
	}), nil
}

// creatorOf reads the pid in a session cgroup's name (agentrun-PID-N).
func creatorOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "agentrun-")
	if !ok {
		return 0, false
	}
	text, seq, ok := strings.Cut(rest, "-")
	if _, err := strconv.Atoi(seq); !ok || err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(text)
	return pid, err == nil && pid > 0
}

// processExists reports whether pid names a process this one can see (one it may not
// signal exists too).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// PidsLimit is the pids.max of a cgroup this process is in, its own or an ancestor:
// how many tasks (processes and threads) the cgroup allows, and how many it has.
type PidsLimit struct {
	Dir          string
	Max, Current int
}

// PidsLimits are the pids cgroups that bound the tasks of this process and of what it
// starts: its own and each ancestor whose pids.max is a number, in the v2 hierarchy
// and in v1's pids hierarchy. Where a container's cgroup namespace hides the host's,
// its own root is the container's limit.
func PidsLimits() []PidsLimit {
	var out []PidsLimit
	for _, c := range ownCgroups() {
		for dir := c.dir; strings.HasPrefix(dir, c.root); dir = filepath.Dir(dir) {
			if l, ok := readPidsLimit(dir); ok {
				out = append(out, l)
			}
			if dir == c.root {
				break
			}
		}
	}
	return out
}

// readPidsLimit reads the pids.max and pids.current of the cgroup at dir; false when
// it sets no limit or is not a pids cgroup.
func readPidsLimit(dir string) (PidsLimit, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "pids.max"))
	if err != nil {
		return PidsLimit{}, false
	}
	max, ok := parsePidsMax(string(b))
	if !ok {
		return PidsLimit{}, false
	}
	l := PidsLimit{Dir: dir, Max: max}
	if b, err := os.ReadFile(filepath.Join(dir, "pids.current")); err == nil {
		l.Current, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	return l, true
}

// parsePidsMax reads a pids.max file: a number of tasks, or "max" for no limit (false).
func parsePidsMax(text string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(text))
	return n, err == nil && n >= 0
}

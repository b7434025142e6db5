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

// LayerMemory is a memory cgroup that bounds the memory of a session: its processes'
// and the pages of its scratch space, which the kernel charges to it.
const LayerMemory Layer = "cgroup_memory"

// DefaultMaxPids bounds the tasks of one session: room for builds and test runs, not
// for a fork bomb.
const DefaultMaxPids = 1024

// CgroupLimits are the limits of a session's cgroup; a zero field sets none.
type CgroupLimits struct {
	// Pids is pids.max: the tasks of the session.
	Pids int
	// Memory is the session's memory in bytes (memory.max, or v1's limit_in_bytes), swap
	// included where the kernel counts it: past it the kernel reclaims, then kills the
	// largest process of the session.
	Memory uint64
}

// Cgroup is a session's cgroup, which bounds how many tasks and how much memory a
// session's worker and everything it starts may have. RLIMIT_NPROC does not hold for
// uid 0 (the kernel never applies it to root, also when root is mapped into a user
// namespace), so this is the fork bomb's limit when agentrun runs as root; and no
// rlimit bounds a session's memory, whose processes each have RLIMIT_AS and whose
// scratch space is no process's. It needs a writable hierarchy of the controller,
// cgroup v2 or v1: one folder in each hierarchy that holds one of its controllers.
type Cgroup struct {
	dirs   []string // the folders made, one per hierarchy
	pids   string   // the folder holding pids.max, "" without
	memory string   // the folder holding the memory limit, "" without
	memV1  bool     // memory is in the v1 memory hierarchy
	limit  uint64   // the memory limit set
}

var cgroupSeq atomic.Int64

// NewCgroup makes a session cgroup below this process's own in each hierarchy that can
// hold one of l's controllers. A controller with no writable hierarchy is left out
// (Layers says which hold); it fails when none is.
func NewCgroup(l CgroupLimits) (*Cgroup, error) {
	name := fmt.Sprintf("agentrun-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	c := &Cgroup{}
	made := map[string]string{} // a hierarchy's base → the folder made there
	folder := func(ctl string) (dir string, v2 bool) {
		base, v2, err := cgroupBase(ctl)
		if err != nil {
			return "", false
		}
		if dir, ok := made[base]; ok {
			return dir, v2
		}
		dir = filepath.Join(base, name)
		if os.Mkdir(dir, 0o755) != nil {
			return "", false
		}
		made[base] = dir
		c.dirs = append(c.dirs, dir)
		return dir, v2
	}
	if l.Pids > 0 {
		if dir, _ := folder("pids"); dir != "" && writeCgroup(dir, "pids.max", strconv.Itoa(l.Pids)) == nil {
			c.pids = dir
		}
	}
	if l.Memory > 0 {
		if dir, v2 := folder("memory"); dir != "" && limitMemory(dir, v2, l.Memory) == nil {
			c.memory, c.memV1, c.limit = dir, !v2, l.Memory
		}
	}
	if c.pids == "" && c.memory == "" {
		err := c.Remove()
		return nil, errors.Join(errors.New("cgroup: no writable pids or memory hierarchy"), err)
	}
	return c, nil
}

// limitMemory sets the memory limit of the cgroup at dir, and the same for memory and
// swap together where the kernel has swap accounting: a session that could swap would
// hold its limit in memory and as much again on the disk.
func limitMemory(dir string, v2 bool, bytes uint64) error {
	n := strconv.FormatUint(bytes, 10)
	if v2 {
		if err := writeCgroup(dir, "memory.max", n); err != nil {
			return err
		}
		if err := writeCgroup(dir, "memory.swap.max", "0"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := writeCgroup(dir, "memory.limit_in_bytes", n); err != nil {
		return err
	}
	if err := writeCgroup(dir, "memory.memsw.limit_in_bytes", n); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// writeCgroup writes one of a cgroup's control files.
func writeCgroup(dir, file, value string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	return nil
}

// Layers are the layers the cgroup holds: LayerPids, LayerMemory or both.
func (c *Cgroup) Layers() []Layer {
	var out []Layer
	if c.pids != "" {
		out = append(out, LayerPids)
	}
	if c.memory != "" {
		out = append(out, LayerMemory)
	}
	return out
}

// Dir is the folder of the cgroup's pids controller ("" without).
func (c *Cgroup) Dir() string { return c.pids }

// MemoryLimit is the memory limit the cgroup sets in bytes (0 without).
func (c *Cgroup) MemoryLimit() uint64 { return c.limit }

// OOMKills is how many processes the kernel has killed for the cgroup's memory limit.
func (c *Cgroup) OOMKills() int {
	if c.memory == "" {
		return 0
	}
	file, key := "memory.events", "oom_kill"
	if c.memV1 {
		file = "memory.oom_control"
	}
	b, err := os.ReadFile(filepath.Join(c.memory, file))
	if err != nil {
		return 0
	}
	return flatKey(string(b), key)
}

// flatKey is the value of key in the text of a cgroup's flat-keyed file (one "key
// value" a line); 0 when it has none.
func flatKey(text, key string) int {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+" "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// Add moves process pid (and the threads it has) into the cgroup, in each hierarchy;
// what it starts afterwards is born there.
func (c *Cgroup) Add(pid int) error {
	for _, dir := range c.dirs {
		if err := writeCgroup(dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// Remove kills whatever is left in the cgroup and removes its folders.
func (c *Cgroup) Remove() error {
	var errs []error
	for _, dir := range c.dirs {
		errs = append(errs, removeCgroup(dir))
	}
	return errors.Join(errs...)
}

// removeCgroup kills the tasks of the cgroup at dir and removes it.
func removeCgroup(dir string) error {
	for range 100 {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("cgroup: %w", err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		// A killed task leaves the cgroup once it is reaped; the next rmdir succeeds.
		runtime.Gosched()
	}
	return fmt.Errorf("cgroup: %s still has tasks", dir)
}

// PidsBase is this process's own folder in a writable pids hierarchy, where its
// sessions' cgroups (agentrun-PID-N) go.
func PidsBase() (string, error) {
	base, _, err := cgroupBase("pids")
	return base, err
}

// cgroupBase is this process's own folder in a writable hierarchy of controller ctl
// (pids or memory), where its sessions' cgroups go, and whether it is cgroup v2.
func cgroupBase(ctl string) (string, bool, error) {
	for _, c := range ownCgroups(ctl) {
		if c.v2 {
			enabled, err := os.ReadFile(filepath.Join(c.dir, "cgroup.subtree_control"))
			if err != nil || !slices.Contains(strings.Fields(string(enabled)), ctl) {
				continue // v2 without the controller enabled for children
			}
		}
		if syscall.Access(c.dir, 2) == nil { // W_OK
			return c.dir, c.v2, nil
		}
	}
	return "", false, fmt.Errorf("cgroup: no writable %s hierarchy", ctl)
}

// cgroupDir is this process's own folder in one cgroup hierarchy, below its root.
type cgroupDir struct {
	root, dir string
	v2        bool
}

// ownCgroups are this process's folders in the hierarchies that can hold controller
// ctl: v2, mounted at /sys/fs/cgroup or beside v1 at /sys/fs/cgroup/unified, then the
// controller's v1 hierarchy (its root when /proc/self/cgroup names none).
func ownCgroups(ctl string) []cgroupDir {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	v1, v2 := parseCgroups(string(b), ctl)
	var out []cgroupDir
	if v2 != "" {
		for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
			out = append(out, cgroupDir{root: root, dir: filepath.Join(root, v2), v2: true})
		}
	}
	v1Root := "/sys/fs/cgroup/" + ctl
	return append(out, cgroupDir{root: v1Root, dir: filepath.Join(v1Root, v1)})
}

// parseCgroups reads /proc/PID/cgroup: the path of the process's cgroup in the v1
// hierarchy of controller ctl, and in the v2 hierarchy (either empty when absent).
func parseCgroups(text, ctl string) (v1, v2 string) {
	for line := range strings.Lines(text) {
		parts := strings.SplitN(strings.TrimSuffix(line, "\n"), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case slices.Contains(strings.Split(parts[1], ","), ctl):
			v1 = parts[2]
		}
	}
	return v1, v2
}

// sessionControllers are the controllers of session cgroups.
var sessionControllers = []string{"pids", "memory"}

// cgroupBases are the distinct folders where this process's session cgroups go.
func cgroupBases() []string {
	var out []string
	for _, ctl := range sessionControllers {
		if base, _, err := cgroupBase(ctl); err == nil && !slices.Contains(out, base) {
			out = append(out, base)
		}
	}
	return out
}

// RemoveStaleCgroups removes the empty session cgroups that agentrun processes which
// no longer run left below this process's own: a run killed with SIGKILL cannot remove
// its own, and its workers die with it (their parent-death signal), which leaves the
// folders empty. A cgroup that still has tasks, or whose creator is alive, stays. It
// returns how many it removed; no writable hierarchy is not an error.
func RemoveStaleCgroups() (int, error) {
	n := 0
	var errs []error
	for _, base := range cgroupBases() {
		m, err := removeStaleIn(base)
		n += m
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// removeStaleIn is RemoveStaleCgroups in the cgroup folder base.
func removeStaleIn(base string) (int, error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return 0, fmt.Errorf("cgroup: %w", err)
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

// CgroupsOf lists the session cgroups that process pid made (agentrun-PID-N) where
// this process's would go, which a child inherits, in every hierarchy: none without a
// writable one.
func CgroupsOf(pid int) ([]string, error) {
	var out []string
	for _, base := range cgroupBases() {
		dirs, err := cgroupsOfIn(base, pid)
		if err != nil {
			return nil, err
		}
		out = append(out, dirs...)
	}
	return out, nil
}

// cgroupsOfIn is CgroupsOf in the cgroup folder base.
func cgroupsOfIn(base string, pid int) ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(base, fmt.Sprintf("agentrun-%d-*", pid)))
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
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
	for _, c := range ownCgroups("pids") {
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

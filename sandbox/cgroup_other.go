//go:build !linux

package sandbox

import "errors"

// LayerPids is a pids cgroup that bounds the processes (and threads) of a session.
const LayerPids Layer = "cgroup_pids"

// LayerMemory is a memory cgroup that bounds the memory of a session.
const LayerMemory Layer = "cgroup_memory"

// DefaultMaxPids bounds the tasks of one session.
const DefaultMaxPids = 1024

// CgroupLimits are the limits of a session's cgroup.
type CgroupLimits struct {
	Pids   int
	Memory uint64
}

// Cgroup is not available on this platform.
type Cgroup struct{}

// NewCgroup fails here: there are no cgroups.
func NewCgroup(CgroupLimits) (*Cgroup, error) { return nil, errors.New("cgroup: needs Linux") }

// Layers is empty: there is no cgroup.
func (*Cgroup) Layers() []Layer { return nil }

// Dir is empty: there is no cgroup.
func (*Cgroup) Dir() string { return "" }

// MemoryLimit is 0: there is no cgroup.
func (*Cgroup) MemoryLimit() uint64 { return 0 }

// OOMKills is 0: there is no cgroup.
func (*Cgroup) OOMKills() int { return 0 }

// Add does nothing.
func (*Cgroup) Add(int) error { return nil }

// Remove does nothing.
func (*Cgroup) Remove() error { return nil }

// RemoveStaleCgroups does nothing: there are no cgroups.
func RemoveStaleCgroups() (int, error) { return 0, nil }

// CgroupsOf lists nothing: there are no cgroups.
func CgroupsOf(int) ([]string, error) { return nil, nil }

// PidsBase fails here: there are no cgroups.
func PidsBase() (string, error) { return "", errors.New("cgroup: needs Linux") }

// PidsLimit is the pids.max of a cgroup this process is in.
type PidsLimit struct {
	Dir          string
	Max, Current int
}

// PidsLimits is empty here: there are no cgroups.
func PidsLimits() []PidsLimit { return nil }

//go:build !linux

package sandbox

import "errors"

// LayerPids is a pids cgroup that bounds the processes (and threads) of a session.
const LayerPids Layer = "cgroup_pids"

// DefaultMaxPids bounds the tasks of one session.
const DefaultMaxPids = 1024

// Pids is not available on this platform.
type Pids struct{}

// NewPids fails here: there are no cgroups.
func NewPids(int) (*Pids, error) { return nil, errors.New("pids cgroup: needs Linux") }

// Dir is empty: there is no cgroup.
func (*Pids) Dir() string { return "" }

// Add does nothing.
func (*Pids) Add(int) error { return nil }

// Remove does nothing.
func (*Pids) Remove() error { return nil }

// RemoveStalePids does nothing: there are no cgroups.
func RemoveStalePids() (int, error) { return 0, nil }

// PidsOf lists nothing: there are no cgroups.
func PidsOf(int) ([]string, error) { return nil, nil }

// PidsBase fails here: there are no cgroups.
func PidsBase() (string, error) { return "", errors.New("pids cgroup: needs Linux") }

// PidsLimit is the pids.max of a cgroup this process is in.
type PidsLimit struct {
	Dir          string
	Max, Current int
}

// PidsLimits is empty here: there are no cgroups.
func PidsLimits() []PidsLimit { return nil }

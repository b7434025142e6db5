// Package sandbox confines a session's worker process with the kernel: namespaces, a new
// root, Landlock, seccomp, no_new_privs and rlimits, chosen by level and shaped by the
// session's bash_mode; what cannot be had is reported, never silently dropped.
package sandbox

import (
	"fmt"
	"strings"
)

// Level is how strongly a session's tools are confined.
type Level string

// The levels, strongest first.
const (
	// LevelStrict is user, mount, pid, ipc, uts and net namespaces with a new root,
	// plus every layer of LevelLandlock.
	LevelStrict Level = "strict"
	// LevelLandlock is Landlock path rules, seccomp, no_new_privs and rlimits, for
	// machines that refuse namespaces (most containers).
	LevelLandlock Level = "landlock"
	// LevelOff runs tools in the worker process without kernel confinement.
	LevelOff Level = "off"
)

// Levels lists the levels, strongest first.
var Levels = []Level{LevelStrict, LevelLandlock, LevelOff}

// ParseLevel parses a level name; "" means the strongest available (Best).
func ParseLevel(s string) (Level, error) {
	switch Level(s) {
	case LevelStrict, LevelLandlock, LevelOff:
		return Level(s), nil
	}
	return "", fmt.Errorf("sandbox level %q: want strict, landlock or off", s)
}

// Layer names one confinement mechanism, as recorded in session_start and result.json.
type Layer string

// The layers.
const (
	LayerUserNS      Layer = "userns"
	LayerMountNS     Layer = "mountns"
	LayerPIDNS       Layer = "pidns"
	LayerIPCNS       Layer = "ipcns"
	LayerUTSNS       Layer = "utsns"
	LayerNetNS       Layer = "netns"
	LayerLandlock    Layer = "landlock"
	LayerSeccomp     Layer = "seccomp"
	LayerNoNewPrivs  Layer = "no_new_privs"
	LayerRlimits     Layer = "rlimits"
	LayerCapsDropped Layer = "caps_dropped"
)

// Layers returns the layers a worker at level l puts in force when every step works;
// root says the worker runs as uid 0 outside a user namespace (capabilities to drop).
func (l Level) Layers(root bool) []Layer {
	switch l {
	case LevelStrict:
		return []Layer{LayerUserNS, LayerMountNS, LayerPIDNS, LayerIPCNS, LayerUTSNS, LayerNetNS,
			LayerRlimits, LayerCapsDropped, LayerNoNewPrivs, LayerLandlock, LayerSeccomp}
	case LevelLandlock:
		if root {
			return []Layer{LayerRlimits, LayerCapsDropped, LayerNoNewPrivs, LayerLandlock, LayerSeccomp}
		}
		return []Layer{LayerRlimits, LayerNoNewPrivs, LayerLandlock, LayerSeccomp}
	default:
		return []Layer{}
	}
}

// LayerList joins layers with commas, for logs.
func LayerList(ls []Layer) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = string(l)
	}
	return strings.Join(s, ",")
}

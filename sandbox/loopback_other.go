//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
)

// LoopbackUp brings the interface "lo" up in the current network namespace; network
// namespaces are Linux-only, so elsewhere it fails.
func LoopbackUp() error {
	return errors.New("sandbox: loopback up: network namespaces need linux, not " + runtime.GOOS)
}

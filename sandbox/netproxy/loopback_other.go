//go:build !linux

package netproxy

import (
	"errors"
	"runtime"
)

// LoopbackUp brings the interface "lo" up in the current network namespace; network
// namespaces are Linux-only, so elsewhere it fails.
func LoopbackUp() error {
	return errors.New("netproxy: loopback up: network namespaces need linux, not " + runtime.GOOS)
}

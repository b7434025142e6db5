//go:build !linux

package relay

import (
	"errors"
	"runtime"
)

// LoopbackUp brings the interface "lo" up in the current network namespace; network
// namespaces are Linux-only, so elsewhere it fails.
func LoopbackUp() error {
	return errors.New("relay: loopback up: network namespaces need linux, not " + runtime.GOOS)
}

//go:build !linux

package worker

import (
	"errors"
	"net"
	"os"
)

// handOffPair is not available here: only level strict hands a listener over, and it
// needs Linux.
func handOffPair() (ours, theirs *os.File, err error) {
	return nil, nil, errors.New("needs Linux")
}

// receiveListener is not available here either.
func receiveListener(*os.File) (net.Listener, error) { return nil, errors.New("needs Linux") }

// serveConnects is not available here: level landlock needs Linux.
func serveConnects(*os.File, int, func(string)) (func(), error) {
	return nil, errors.New("needs Linux")
}

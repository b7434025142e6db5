//go:build !linux

package worker

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/agentrun/agentrun/sandbox"
)

// spawnWorker is not available here: only level strict starts through a Spawner, and
// it needs Linux.
func spawnWorker(*Spawner, string, sandbox.Level, []*os.File, io.Writer) (child, error) {
	return nil, errors.New("worker spawner: needs Linux")
}

// spawnMain is not available here either.
func spawnMain() int {
	fmt.Fprintln(os.Stderr, "worker spawner: needs Linux")
	return 2
}
